package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestResourceStartsItsReferee: --resource without --referee starts a native referee and says
// so; in one process the unsafe lock corrupts a plain resource and has no token to pass; over
// two processes (the workers get --resource with the referee) lockcore-fenced's stale holders
// are turned away by a fenced one, nothing corrupt, the processes' counts merged.
func TestResourceStartsItsReferee(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args                 []string
		driver, kind, tokens string
		procs                int
	}{
		{[]string{"--driver", "unsafe", "--resource", "plain"}, "unsafe", "plain", "no token", 1},
		{[]string{"--procs", "2", "--driver", "lockcore-fenced", "--resource", "fenced", "--lease", "15ms"}, "lockcore-fenced", "fenced", "yes", 2},
	} {
		dir := t.TempDir()
		errb := &syncBuffer{}
		args := append([]string{"run", "--concurrency", "2", "--keys", "1", "--hold", "45ms", "--duration", "1s", "--warmup", "0s", "--out", dir}, tc.args...)
		code, stdout := finish(t, lockbench(t, errb, args...), errb)
		if code != exitFailure {
			t.Fatalf("%s: exit %d, want %d (double grants)\n%s\n%s", tc.driver, code, exitFailure, stdout, errb)
		}
		if !strings.Contains(errb.String(), "started for --resource") || !strings.Contains(errb.String(), "resource "+tc.kind+": "+tc.driver+": ") {
			t.Errorf("%s: no word of the referee started for the resource, or of what the resource saw:\n%s", tc.driver, errb)
		}
		runs := readResult(t, dir).Runs
		if len(runs) != 1 || runs[0].Resource == nil || runs[0].Referee == nil {
			t.Fatalf("%s: runs %+v: want one with a resource and a referee", tc.driver, runs)
		}
		r, res := runs[0], runs[0].Resource
		if r.Referee.Violations == 0 || res.Writes == 0 || res.Errors != 0 || res.Tokens() != tc.tokens {
			t.Errorf("%s: %d double grants, resource %+v: want some, written, tokens %q", tc.driver, r.Referee.Violations, res, tc.tokens)
		}
		if tc.procs > 1 {
			if r.Fleet == nil || len(r.Fleet.Processes) != tc.procs {
				t.Errorf("%s: fleet %+v: want %d processes merged", tc.driver, r.Fleet, tc.procs)
			}
			assertNoOrphans(t, errb.String(), tc.procs)
		}
		switch tc.driver {
		case "unsafe":
			if res.Kind != tc.kind || res.CorruptWrites == 0 {
				t.Errorf("unsafe on a plain resource: %+v, want corrupt writes", res)
			}
		case "lockcore-fenced":
			if res.Kind != tc.kind || res.CorruptWrites != 0 || res.StaleRejected == 0 || res.LeasesLostAtRelease == 0 {
				t.Errorf("lockcore-fenced on a fenced resource: %+v, want stale writes rejected, leases lost at release, none corrupt", res)
			}
		}
		row := false
		for _, l := range strings.Split(stdout, "\n") {
			row = row || strings.HasPrefix(l, res.Kind+" ") && strings.Contains(l, " "+tc.driver+" ") && strings.Contains(l, " "+tc.tokens+" ")
		}
		if !strings.Contains(stdout, "corrupt writes  stale rejected") || !row {
			t.Errorf("%s: no resource table with its row:\n%s", tc.driver, stdout)
		}
	}
}

// TestResourceBadInput: an unknown resource, a workload whose holders write nothing, and a
// worker without the run's referee are refused with exit 2, before anything runs.
func TestResourceBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--resource", "fencd"}, `--resource "fencd": want fenced or plain`},
		{[]string{"run", "--resource", "fenced", "--workload", "rw"}, "--resource is for --workload contention"},
		{[]string{"worker", "--resource", "plain", "--run", "r", "--addr", "127.0.0.1:1", "--driver", "naive"}, "--resource needs --referee"},
	} {
		var out, errb bytes.Buffer
		if code := dispatch(c.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("lockbench %q: exit %d, %q; want %d saying %q", c.args, code, errb.String(), exitUsage, c.want)
		}
	}
}
