package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/scenario"
	"github.com/spf13/pflag"
)

// Every scenario of the safety matrix parses against run's flags and passes run's checks: a
// renamed fault or flag fails here, not in a reader's terminal.
func TestScenariosParse(t *testing.T) {
	t.Parallel()
	for _, name := range scenario.Names() {
		if err := parseOnly([]string{"run", "--scenario", name}); err != nil {
			t.Errorf("lockbench run --scenario %s: %v", name, err)
		}
	}
	if err := parseOnly([]string{"run", "--scenario", "pause"}); err == nil ||
		!strings.Contains(err.Error(), `unknown scenario "pause": want one of pause-over-lease`) {
		t.Errorf("an unknown scenario: %v", err)
	}
}

// The command line wins over the scenario, flag by flag; a repeatable flag the user gives
// replaces the scenario's values rather than adding to them.
func TestScenarioUserFlagsWin(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	drv := fs.StringSlice("driver", nil, "")
	faults := fs.StringArray("fault", nil, "")
	dur := fs.Duration("duration", 0, "")
	for _, n := range []string{"referee", "resource", "procs", "keys", "concurrency", "hold", "warmup", "topology", "provider", "image"} {
		fs.String(n, "", "")
	}
	if err := fs.Parse([]string{"--driver", "naive", "--fault", "pause-client:gen2@1s+2s"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := applyScenario(fs, "pause-over-lease", &out); err != nil {
		t.Fatal(err)
	}
	if len(*drv) != 1 || (*drv)[0] != "naive" {
		t.Errorf("--driver = %q, want the user's naive alone", *drv)
	}
	if len(*faults) != 1 || (*faults)[0] != "pause-client:gen2@1s+2s" {
		t.Errorf("--fault = %q, want the user's fault alone", *faults)
	}
	if *dur == 0 {
		t.Errorf("--duration not set from the scenario")
	}
	if s := out.String(); !strings.Contains(s, "scenario pause-over-lease") || strings.Contains(s, "--driver") || !strings.Contains(s, "--referee=native") {
		t.Errorf("the scenario line %q should name the flags the scenario set, and only those", s)
	}
	// A scenario with two faults sets both when the user gives none.
	fs2 := pflag.NewFlagSet("t", pflag.ContinueOnError)
	f2 := fs2.StringArray("fault", nil, "")
	fs2.StringSlice("driver", nil, "")
	fs2.Duration("duration", 0, "")
	for _, n := range []string{"referee", "resource", "procs", "keys", "concurrency", "hold", "warmup", "topology"} {
		fs2.String(n, "", "")
	}
	if err := applyScenario(fs2, "redlock-restart", nil); err != nil {
		t.Fatal(err)
	}
	if len(*f2) != 2 {
		t.Errorf("redlock-restart set --fault %q, want its kill and its restart", *f2)
	}
}
