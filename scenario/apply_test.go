package scenario

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// runFlags is a flag set with the run flags the scenarios set, as lockbench run defines them.
func runFlags() (*pflag.FlagSet, *[]string, *[]string) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	drv := fs.StringSlice("driver", nil, "")
	faults := fs.StringArray("fault", nil, "")
	fs.Duration("duration", 0, "")
	for _, n := range []string{"referee", "resource", "procs", "keys", "concurrency", "hold", "warmup", "topology", "provider", "image", "generators", "net", "lease"} {
		fs.String(n, "", "")
	}
	return fs, drv, faults
}

// The command line wins over the scenario, flag by flag; a repeatable flag the user gives
// replaces the scenario's values rather than adding to them.
func TestApplyUserFlagsWin(t *testing.T) {
	t.Parallel()
	fs, drv, faults := runFlags()
	if err := fs.Parse([]string{"--driver", "naive", "--fault", "pause-client:gen2@1s+2s"}); err != nil {
		t.Fatal(err)
	}
	s, err := Get("pause-over-lease")
	if err != nil {
		t.Fatal(err)
	}
	set, err := s.Apply(fs.Changed, fs.Set)
	if err != nil {
		t.Fatal(err)
	}
	if len(*drv) != 1 || (*drv)[0] != "naive" {
		t.Errorf("--driver = %q, want the user's naive alone", *drv)
	}
	if len(*faults) != 1 || (*faults)[0] != "pause-client:gen2@1s+2s" {
		t.Errorf("--fault = %q, want the user's fault alone", *faults)
	}
	if d, _ := fs.GetDuration("duration"); d == 0 {
		t.Errorf("--duration not set from the scenario")
	}
	line := strings.Join(set, " ")
	if strings.Contains(line, "--driver") || strings.Contains(line, "--fault") || !slices.Contains(set, "--referee=native") {
		t.Errorf("set %q: want the flags the scenario set, and only those", set)
	}
}

// A scenario with two faults sets both when the user gives none: whether a flag was given is
// asked before the scenario sets any.
func TestApplyRepeatedFlag(t *testing.T) {
	t.Parallel()
	fs, _, faults := runFlags()
	s, err := Get("redlock-restart")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(fs.Changed, fs.Set); err != nil {
		t.Fatal(err)
	}
	if len(*faults) != 2 {
		t.Errorf("redlock-restart set --fault %q, want its kill and its restart", *faults)
	}
}

// A flag the scenario cannot set is named, with the scenario: lockbench's bug, said plainly.
func TestApplySetFails(t *testing.T) {
	t.Parallel()
	s, err := Get("pause-over-lease")
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("no such flag")
	set, err := s.Apply(func(string) bool { return false }, func(string, string) error { return refused })
	if !errors.Is(err, refused) || !strings.HasPrefix(err.Error(), "--scenario pause-over-lease: flag --") || len(set) != 0 {
		t.Errorf("Apply = %q, %v; want nothing set and an error naming the scenario and the flag", set, err)
	}
}
