package collect

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlags: --collect and --collect-ca-file, and the worker's --run, as run and a worker take
// them; each complaint names its flag and wraps ErrBadInput.
func TestFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		worker bool
		args   []string
		procs  int
		want   string // "" for none
	}{
		{false, nil, 1, ""},
		{false, []string{"--collect", "127.0.0.1:6379"}, 2, ""},
		{false, []string{"--collect", "127.0.0.1:6379"}, 1, "--collect is where generator processes hand back their results: give --procs N (2 or more)"},
		{false, []string{"--collect-ca-file", "ca.pem"}, 2, "--collect-ca-file needs --collect"},
		{false, []string{"--collect", "redis://a b"}, 2, "--collect: "},
		{true, []string{"--collect", "127.0.0.1:6379", "--run", "r-1"}, 3, ""},
		{true, []string{"--collect", "127.0.0.1:6379"}, 3, ""}, // without --run: bench.WorkerSpec.Validate's
		{true, []string{"--run", "a b"}, 3, "--run: "},
	} {
		var c Flags
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		c.Register(fs, tc.worker)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		err := c.Check(tc.worker, tc.procs)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != "" && (!errors.Is(err, ErrBadInput) || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want ErrBadInput starting %q", tc.args, err, tc.want)
		}
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	(&Flags{}).Register(fs, false)
	if fs.Lookup("run") != nil {
		t.Error("run has --run: only a worker names the run it belongs to")
	}
	c := Flags{Addr: "10.0.0.1:6379", CAFile: "ca.pem"}
	if o := c.Options(); o.Addr != c.Addr || o.CAFile != c.CAFile {
		t.Errorf("Options: %+v", o)
	}
}
