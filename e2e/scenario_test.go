package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose/docker/dockertest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/scenario"
)

// The safety matrix's tests: each runs a column of the matrix (lockbench run --scenario NAME)
// on two of its rows, one that the theory says fails the scenario and one that it says
// survives it, and asserts that direction, never a count. Every column, whatever it shows,
// also keeps its checkers consistent with each other: a write the resource saw as corrupt had
// two holders inside the lock, which the referee, independently, counts as a double grant.

// runScenario runs the scenario with the extra flags (which win over the scenario's) and
// returns the result file; exit 0 or 1 (violations, the expected outcome of most columns).
func runScenario(t *testing.T, name string, extra ...string) *results.File {
	t.Helper()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, append([]string{"run", "--scenario", name, "--out", dir}, extra...)...)
	code, out := finish(t, cmd, errb)
	if sc, _ := scenario.Get(name); sc.Docker {
		t.Cleanup(func() { removeLeft(cmd.Process.Pid) })
		defer assertNothingLeft(t, cmd.Process.Pid)
	}
	if code != exitOK && code != exitFailure {
		t.Fatalf("lockbench run --scenario %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, out, errb)
	}
	f := readResult(t, dir)
	for i := range f.Runs {
		r := &f.Runs[i]
		for _, flt := range r.Faults {
			if !flt.Fired || flt.Error != "" {
				t.Errorf("%s %s: fault %+v did not run cleanly", name, r.Driver, flt)
			}
		}
		if r.Resource == nil || r.Referee == nil || r.Resource.Writes == 0 || r.Referee.Entries == 0 {
			t.Fatalf("%s %s: resource %+v, referee %+v: want both to have seen the holders", name, r.Driver, r.Resource, r.Referee)
		}
		if r.Resource.CorruptWrites > 0 && r.Referee.Violations == 0 {
			t.Errorf("%s %s: %d corrupt writes but no double grant on the referee", name, r.Driver, r.Resource.CorruptWrites)
		}
		t.Logf("%s %s: double grants %d, corrupt writes %d, stale rejected %d, leases lost at release %d, acquisitions %d",
			name, r.Driver, r.Referee.Violations, r.Resource.CorruptWrites, r.Resource.StaleRejected, r.Resource.LeasesLostAtRelease, r.Acquisitions)
	}
	return f
}

// run returns the run of driver in f, failing the test when there is none.
func scenarioRun(t *testing.T, f *results.File, driver string) *results.Run {
	t.Helper()
	for i := range f.Runs {
		if f.Runs[i].Driver == driver {
			return &f.Runs[i]
		}
	}
	t.Fatalf("no run of %s", driver)
	return nil
}

// shownWithin runs attempt up to attempts times and fails the test unless one of them shows what
// the theory predicts. A pause or a stall catches holders wherever they are in their cycle: under
// the load of CI (these tests run in parallel, each with two processes under the race detector)
// the calls around a 20 ms hold take as long as the hold itself, and in about one run in ten the
// pause caught no holder between its two writes, so nothing could interleave (seen: 60 double
// grants, 8 leases lost, 0 corrupt writes). What every attempt must show (no corrupt write for a
// fenced or renewed lock) attempt checks itself, with t.Errorf, on every run.
func shownWithin(t *testing.T, attempts int, attempt func() (shown bool, seen string)) {
	t.Helper()
	var seen []string
	for i := 0; i < attempts; i++ {
		shown, s := attempt()
		if shown {
			return
		}
		seen = append(seen, s)
		t.Logf("attempt %d of %d did not show it: %s", i+1, attempts, s)
	}
	t.Errorf("not shown in %d runs: %s", attempts, strings.Join(seen, "; "))
}

// A process paused past its lease: a driver without fencing lets the woken holder write over the
// next one (double grants, corrupt writes on a plain resource); lockcore-fenced's token lets the
// fenced resource turn the late writes away (no corrupt write, stale writes rejected). The
// issue's acceptance run.
func TestScenarioPauseOverLease(t *testing.T) {
	t.Parallel()
	t.Run("lockcore/plain", func(t *testing.T) {
		t.Parallel()
		shownWithin(t, 3, func() (bool, string) {
			r := scenarioRun(t, runScenario(t, "pause-over-lease", "--driver", "lockcore:watchdog=1s", "--resource", "plain"), "lockcore:watchdog=1s")
			return r.Referee.Violations > 0 && r.Resource.CorruptWrites > 0,
				fmt.Sprintf("lockcore on a plain resource: %d double grants, %d corrupt writes; want both above 0", r.Referee.Violations, r.Resource.CorruptWrites)
		})
	})
	t.Run("lockcore-fenced/fenced", func(t *testing.T) {
		t.Parallel()
		shownWithin(t, 3, func() (bool, string) {
			r := scenarioRun(t, runScenario(t, "pause-over-lease", "--driver", "lockcore-fenced:watchdog=1s"), "lockcore-fenced:watchdog=1s")
			if r.Resource.CorruptWrites != 0 || r.Resource.TokenWrites == 0 {
				t.Errorf("lockcore-fenced on the fenced resource: %d corrupt writes, %d token writes; want 0 and above 0", r.Resource.CorruptWrites, r.Resource.TokenWrites)
			}
			return r.Resource.StaleRejected > 0,
				fmt.Sprintf("lockcore-fenced on the fenced resource: %d stale writes rejected, want above 0", r.Resource.StaleRejected)
		})
	})
}

// A holder stalled past its lease while its process runs on: a watchdog keeps renewing the
// lock, so nobody else is granted it; a lease that is never renewed runs out under the stalled
// holder.
func TestScenarioStallOverLease(t *testing.T) {
	t.Parallel()
	shownWithin(t, 3, func() (bool, string) {
		f := runScenario(t, "stall-over-lease", "--driver", "lockcore:watchdog=1s,naive:lease=1s")
		lc, nv := scenarioRun(t, f, "lockcore:watchdog=1s"), scenarioRun(t, f, "naive:lease=1s")
		if lc.Referee.Violations != 0 || lc.Resource.CorruptWrites != 0 || lc.Violations != 0 {
			t.Errorf("lockcore with its watchdog running: %d double grants, %d corrupt writes; want none", lc.Referee.Violations, lc.Resource.CorruptWrites)
		}
		return nv.Referee.Violations > 0 && nv.Resource.CorruptWrites > 0,
			fmt.Sprintf("naive, never renewed: %d double grants, %d corrupt writes; want both above 0", nv.Referee.Violations, nv.Resource.CorruptWrites)
	})
}

// A sentinel fail-over under load (issue 38): lockcore synced (sync=wait, one WAIT per
// pipeline) reports no grant the promoted replica lacks, so in every run it has no double grant
// and no corrupt write, and lockcore-fenced's token counter never goes back (the fenced resource
// rejects no legitimate write); unsynced (sync=off) the lost grants show — a double grant or
// tokens set back — in one of up to three runs (whether a run catches a grant in flight at the
// fail-over is timing).
//
// Each synced row runs first in its invocation, on a deployment with both replicas connected:
// the runs of one invocation share the deployment, and a run that starts right after another
// one's fail-over finds one replica still rejoining. WAIT then asks for the one connected (as
// Redisson's does), and a fail-over before the other is back can promote the replica that did not
// acknowledge — the limit docs/lockcore.md states (seen in CI: 226 writes rejected as stale for
// a synced fenced row that ran second).
func TestScenarioSentinelFailover(t *testing.T) {
	t.Parallel()
	const (
		synced         = "lockcore:watchdog=1s:sync=wait"
		syncedFenced   = "lockcore-fenced:watchdog=1s:sync=wait"
		unsyncedFenced = "lockcore-fenced:watchdog=1s:sync=off"
	)
	faultRan := func(t *testing.T, f *results.File) {
		for i := range f.Runs {
			if len(f.Runs[i].Faults) != 1 {
				t.Errorf("%s: faults %+v, want the fail-over", f.Runs[i].Driver, f.Runs[i].Faults)
			}
		}
	}
	lostNothing := func(t *testing.T, f *results.File, d string) {
		r := scenarioRun(t, f, d)
		if r.Referee.Violations != 0 || r.Resource.CorruptWrites != 0 || r.Resource.StaleRejected != 0 || r.Acquisitions == 0 {
			t.Errorf("%s through the fail-over: %d double grants, %d corrupt writes, %d writes rejected as stale, %d acquisitions; want none, none, none and some",
				d, r.Referee.Violations, r.Resource.CorruptWrites, r.Resource.StaleRejected, r.Acquisitions)
		}
	}
	t.Run("synced", func(t *testing.T) {
		t.Parallel()
		f := runScenario(t, "sentinel-failover", "--driver", synced)
		faultRan(t, f)
		lostNothing(t, f, synced)
	})
	t.Run("fenced", func(t *testing.T) {
		t.Parallel()
		shownWithin(t, 3, func() (bool, string) {
			f := runScenario(t, "sentinel-failover", "--driver", syncedFenced+","+unsyncedFenced)
			faultRan(t, f)
			lostNothing(t, f, syncedFenced)
			u := scenarioRun(t, f, unsyncedFenced)
			return u.Referee.Violations > 0 || u.Resource.StaleRejected > 0,
				fmt.Sprintf("%s: %d double grants, %d writes rejected as stale; want either above 0", unsyncedFenced, u.Referee.Violations, u.Resource.StaleRejected)
		})
	})
}

// RedLock on 5 masters with one restarted empty: the RedLock drivers run, the kill and the
// restart both happen, the checkers agree; drivers that need one deployment are skipped.
func TestScenarioRedLockRestart(t *testing.T) {
	t.Parallel()
	f := runScenario(t, "redlock-restart", "--driver", "lockcore:watchdog=1s,redsync:lease=1s")
	for _, d := range []string{"lockcore:watchdog=1s", "redsync:lease=1s"} {
		if r := scenarioRun(t, f, d); len(r.Faults) != 2 {
			t.Errorf("%s: faults %+v, want the kill and the restart", d, r.Faults)
		}
	}
}

// The master cut off from its replicas and sentinels (Docker): the isolation runs and heals,
// and the checkers agree. lockcore-fenced synced (issue 38): the isolated master cannot have its
// grants acknowledged, so it confirms none — no double grant, no corrupt write, and the token
// counter never goes back (no legitimate write rejected as stale).
func TestScenarioPartitionMaster(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	const d = "lockcore-fenced:watchdog=1s:sync=wait"
	f := runScenario(t, "partition-master", "--image", image, "--driver", d)
	r := scenarioRun(t, f, d)
	if len(r.Faults) != 1 || r.Faults[0].LastedS < 5 {
		t.Errorf("faults %+v, want the isolation, healed after 6s", r.Faults)
	}
	if r.Referee.Violations != 0 || r.Resource.CorruptWrites != 0 || r.Resource.StaleRejected != 0 || r.Acquisitions == 0 {
		t.Errorf("%s through the partition: %d double grants, %d corrupt writes, %d writes rejected as stale, %d acquisitions; want none, none, none and some",
			d, r.Referee.Violations, r.Resource.CorruptWrites, r.Resource.StaleRejected, r.Acquisitions)
	}
}
