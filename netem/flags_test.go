package netem

import (
	"errors"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlag: --net is parsed only when given, and a bad spec names the flag without ErrSpec's
// text, still wrapping it.
func TestFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string // the conditions, or the error
		err  bool
	}{
		{nil, "", false},
		{[]string{"--net", "latency=1ms,jitter=200us"}, "latency=1ms,jitter=200us", false},
		{[]string{"--net", "latency=0"}, "latency=0s", false},
		{[]string{"--net", ""}, "--net: empty; want e.g. latency=1ms,jitter=200us", true},
		{[]string{"--net", "delay=1ms"}, "--net: ", true},
	} {
		var n Flag
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		n.Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := n.Check(fs)
		switch {
		case tc.err && (!errors.Is(err, ErrSpec) || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want):
			t.Errorf("%q: error %v, want ErrSpec starting %q", tc.args, err, tc.want)
		case !tc.err && (err != nil || n.String() != tc.want):
			t.Errorf("%q: %q (%v), want %q", tc.args, n.String(), err, tc.want)
		case !tc.err && (tc.want == "") != (n.Conditions == nil):
			t.Errorf("%q: conditions %v", tc.args, n.Conditions)
		}
	}
}
