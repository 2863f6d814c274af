package bench

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/target"
)

// FaultCheck refuses isolate over several runs, server faults on an attached deployment without
// leave, and signals on docker; it passes what a native single topology can take.
func TestFaultCheck(t *testing.T) {
	t.Parallel()
	parse := func(s string) []faults.Fault {
		f, err := faults.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return []faults.Fault{f}
	}
	single := compose.Spec{Kind: compose.KindSingle}
	run := faults.Layout{Procs: 1, Duration: 10 * time.Second}
	for _, tc := range []struct {
		name string
		c    FaultCheck
		want string // "" passes
	}{
		{"none", FaultCheck{Runs: 3, Attached: true}, ""},
		{"native kill", FaultCheck{Faults: parse("kill:master@3s"), Runs: 1, Topology: single, Provider: target.ProviderNative, Run: run}, ""},
		{"isolate twice", FaultCheck{Faults: parse("isolate:master@3s+2s"), Runs: 2, Topology: single, Run: run}, "--fault isolate with 2 runs"},
		{"attached", FaultCheck{Faults: parse("failover@3s"), Runs: 1, Attached: true, Run: run}, "--fault on an attached deployment (--addr) is refused"},
		{"attached allowed", FaultCheck{Faults: parse("failover@3s"), Runs: 1, Attached: true, AllowAttached: true, Run: run}, ""},
		{"docker kill", FaultCheck{Faults: parse("kill:master@3s"), Runs: 1, Topology: single, Provider: target.ProviderDocker, Run: run}, "--fault: "},
	} {
		err := tc.c.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v; want nil", tc.name, err)
		case tc.want != "" && (!errors.Is(err, ErrBadSpec) || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: %v; want ErrBadSpec, %q", tc.name, err, tc.want)
		}
	}
}
