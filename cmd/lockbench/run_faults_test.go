package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
)

// Bad fault specs and faults that do not fit the topology exit 2 before anything starts.
func TestRunFaultBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		out  string
	}{
		{[]string{"--fault", "kill:master"}, `--fault: bad fault "kill:master": no @AT`},
		{[]string{"--fault", "explode:master@1s"}, `unknown action "explode"`},
		{[]string{"--fault", "pause:master@1s"}, "pause needs a duration"},
		{[]string{"--fault", "kill:sentinel2@1s"}, "a single topology has no sentinels"},
		{[]string{"--topology", "cluster", "--fault", "kill:node9@1s"}, "node9: a cluster topology has 6 nodes"},
		{[]string{"--fault", "failover@1s"}, "a single topology has no fail-over"},
		{[]string{"--fault", "kill:master@20s", "--duration", "10s"}, "not inside the measured phase of 10s"},
		{[]string{"--fault", "restart:master@1s"}, "there is none before 1s"},
		{[]string{"--fault", "partition:master@1s+1s"}, "partition needs a network proxy"},
		{[]string{"--fault", "kill:proc2@1s"}, "this run has one generator process, gen1 (--procs 1)"},
		{[]string{"--fault", "partition:master@1s+1s", "--net", "latency=0", "--procs", "2"}, "each generator process puts --net on its own connections"},
		{[]string{"--fault", "kill:master@1s", "--provider", "docker"}, "--provider docker is not supported for kill"},
		{[]string{"--fault", "kill:master@1s", "--addr", "127.0.0.1:1"}, "--allow-faults-on-attached"},
		{[]string{"--timeline-interval", "1ms"}, "--timeline-interval 1ms: want at least 10ms"},
		{[]string{"--driver", "lockcore", "--topology", "sentinel", "--fault", "isolate:master@1s+1s"}, "isolate cuts a node off from the other servers"},
		{[]string{"--driver", "lockcore,naive", "--provider", "docker", "--topology", "sentinel", "--fault", "isolate:master@1s+1s"}, "--fault isolate with 2 runs"},
		{[]string{"--driver", "lockcore", "--provider", "docker", "--topology", "sentinel", "--fault", "isolate:replica1@1s+1s"}, "not replica1"},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		code := dispatch(append([]string{"run"}, tc.args...), &out, &errb)
		all := out.String() + errb.String()
		if code != exitUsage || !strings.Contains(all, tc.out) {
			t.Errorf("lockbench run %q: exit %d, output %q; want exit %d containing %q", tc.args, code, all, exitUsage, tc.out)
		}
		if strings.Contains(all, "redis-server pid") {
			t.Errorf("lockbench run %q started a server before refusing", tc.args)
		}
	}
}

// Allowed on an attached deployment, faults still have to fit it: lockbench has no process to
// kill there, and a single server has no fail-over. Both exit 2 before anything is measured.
func TestRunFaultsOnAttached(t *testing.T) {
	srv := redistest.NewServer(t)
	for _, tc := range []struct{ fault, out string }{
		{"kill:master@1s", "kill needs servers lockbench started as native processes: lockbench attached to this deployment"},
		{"failover@1s", "a single topology has no fail-over"},
	} {
		var out, errb bytes.Buffer
		code := dispatch([]string{"run", "--addr", srv.Addr(), "--allow-faults-on-attached", "--fault", tc.fault,
			"--duration", "2s", "--no-results"}, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), tc.out) {
			t.Errorf("--fault %s on --addr: exit %d, stderr %q; want exit %d containing %q", tc.fault, code, errb.String(), exitUsage, tc.out)
		}
		if strings.Contains(errb.String(), "[1/") {
			t.Errorf("--fault %s on --addr: a run started before the fault was refused", tc.fault)
		}
	}
}

// The acceptance case, shortened: a sentinel run whose master is killed 1 s into the measured
// phase ends on time, the timeline shows a gap and then grants again, the time to first grant
// after the fault is recorded, and lockcore's mutual exclusion holds (0 violations). Errors are
// the fault's expected effect and do not fail the run.
func TestRunSentinelKillMaster(t *testing.T) {
	t.Parallel()
	const duration = 8 * time.Second // the fail-over takes the sentinels' 1 s down-after and an election
	dir := t.TempDir()
	errb := &syncBuffer{}
	began := time.Now()
	cmd := lockbench(t, errb, "run", "--topology", "sentinel", "--driver", "lockcore", "--concurrency", "8", "--keys", "100",
		"--duration", duration.String(), "--warmup", "200ms", "--fault", "kill:master@1s", "--timeline-interval", "250ms", "--out", dir)
	code, out := finish(t, cmd, errb)
	took := time.Since(began)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 1 {
		t.Fatalf("%d runs", len(f.Runs))
	}
	r := f.Runs[0]
	t.Logf("took %v; phase %.2fs; errors %v; faults %+v", took, r.DurationS, r.ErrorsByKind, r.Faults)
	// On time: the phase lasted as planned, give or take the end of the cycles in flight.
	if r.DurationS < duration.Seconds() || r.DurationS > duration.Seconds()+2 || !r.Complete {
		t.Errorf("measured phase %.2fs, complete %v; want %v", r.DurationS, r.Complete, duration)
	}
	if r.Violations != 0 {
		t.Errorf("lockcore: %d violations under a master kill", r.Violations)
	}
	if len(r.Faults) != 1 {
		t.Fatalf("faults %+v; want the one", r.Faults)
	}
	flt := r.Faults[0]
	if !flt.Fired || flt.Error != "" || flt.FiredS < 1 || flt.FiredS > 1.5 || flt.Addr == "" {
		t.Errorf("fault %+v; want fired at about 1s on the master, without error", flt)
	}
	grant, ok := flt.FirstGrant()
	if !ok || grant <= 0 || flt.FiredS+grant.Seconds() > r.DurationS {
		t.Fatalf("time to first grant after the fault: %v, %v; want one inside the phase", grant, ok)
	}
	t.Logf("first grant %v after the kill (which took %.1fms)", grant, flt.TookS*1000)
	// The timeline: after the fault a point with no grant (the gap), then grants again.
	gapAt, recoveredAt, recoveredEnd := -1.0, -1.0, -1.0
	for _, p := range r.Timeline.Points {
		switch {
		case p.StartS >= flt.FiredS && p.Acquisitions == 0 && gapAt < 0:
			gapAt = p.StartS
		case gapAt >= 0 && p.Acquisitions > 0 && recoveredAt < 0:
			// The point's own length, not the nominal interval: a loaded machine samples late,
			// and a CI run's first grant fell 20 ms past the nominal end of the point holding it.
			recoveredAt, recoveredEnd = p.StartS, p.StartS+p.DurationS
		}
	}
	if gapAt < 0 || recoveredAt < 0 {
		t.Errorf("timeline shows no gap then recovery after %.2fs: %+v", flt.FiredS, r.Timeline.Points)
	}
	// The first grant falls in the point where the timeline recovers (or the one before, whose
	// grants completed in it).
	if g := flt.FiredS + grant.Seconds(); g > recoveredEnd || g < gapAt {
		t.Errorf("first grant at %.2fs; the timeline's gap starts at %.2fs and recovery at %.2fs (ending %.2fs)", g, gapAt, recoveredAt, recoveredEnd)
	}
	for _, want := range []string{"faults: lockcore", "kill:master@1s", "first grant after"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	assertServerGone(t, errb.String())
}

// A pause longer than the phase is cut short when the phase ends: the server is resumed
// (SIGCONT), the run ends on time, and the fault records how long it lasted.
func TestRunPauseOutlastingThePhase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore", "--concurrency", "4", "--keys", "50", "--hold", "1ms",
		"--duration", "1500ms", "--warmup", "0s", "--lease", "1s", "--fault", "pause:master@300ms+1h", "--out", dir)
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	r := readResult(t, dir).Runs[0]
	flt := r.Faults[0]
	if !flt.Fired || flt.Error != "" || flt.LastedS < 1 || flt.LastedS > 3 {
		t.Errorf("fault %+v; want fired, resumed without error about 1.2s later, at the phase's end", flt)
	}
	if r.Violations != 0 || r.DurationS > 4 {
		t.Errorf("violations %d, phase %.2fs", r.Violations, r.DurationS)
	}
	assertServerGone(t, errb.String())
}

// Ctrl-C during a pause ends the run at once: the server is resumed before lockbench stops it,
// the fault records the resume without error, and the result is written, marked incomplete.
func TestCtrlCDuringPause(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore", "--concurrency", "4", "--keys", "50",
		"--duration", "60s", "--warmup", "0s", "--lease", "1s", "--fault", "pause:master@200ms+1h", "--out", dir)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errb.String(), "[1/1]") {
		if time.Now().After(deadline) {
			t.Fatalf("run did not start:\n%s", errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // into the pause
	interruptRun(t, cmd, errb)
	r := readResult(t, dir).Runs[0]
	if len(r.Faults) != 1 {
		t.Fatalf("faults %+v", r.Faults)
	}
	if f := r.Faults[0]; !f.Fired || f.Error != "" || f.LastedS > 30 {
		t.Errorf("fault %+v; want fired, resumed without error when interrupted", f)
	}
	if r.Complete {
		t.Error("an interrupted run is marked complete")
	}
	assertServerGone(t, errb.String())
}

// A partition through the --net proxy longer than the clients' reply timeout: the commands the
// partition caught fail as timeouts, the attempts begun after it are granted only once it heals,
// and the run ends on time with mutual exclusion intact. The server itself never stopped. The
// partition outlasts twice drivers.ReplyTimeout: a client with several calls in flight (lockcore's
// gathered batches, as lockcore:batch=0) learns of the silence from the PING rueidis sends after a
// second without a byte, and gives up ReplyTimeout later; a 3 s partition healed first.
func TestRunPartitionThroughTheProxy(t *testing.T) {
	t.Parallel()
	const duration, partition = 8 * time.Second, 5 * time.Second
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore", "--concurrency", "8", "--keys", "100", "--hold", "1ms",
		"--duration", duration.String(), "--warmup", "200ms", "--net", "latency=0",
		"--fault", "partition:master@1s+"+partition.String(), "--timeline-interval", "250ms", "--out", dir)
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	r := readResult(t, dir).Runs[0]
	t.Logf("phase %.2fs; errors %v; faults %+v", r.DurationS, r.ErrorsByKind, r.Faults)
	if r.Violations != 0 || r.Acquisitions == 0 {
		t.Errorf("%d violations, %d acquisitions", r.Violations, r.Acquisitions)
	}
	if r.DurationS > (duration + 2*time.Second).Seconds() {
		t.Errorf("measured phase %.2fs; want about %v", r.DurationS, duration)
	}
	if r.ErrorsByKind["timeout"] == 0 {
		t.Errorf("a %v partition caught no command on a reply timeout: errors %v", partition, r.ErrorsByKind)
	}
	if len(r.Faults) != 1 {
		t.Fatalf("faults %+v", r.Faults)
	}
	flt := r.Faults[0]
	if !flt.Fired || flt.Error != "" || flt.LastedS < partition.Seconds() {
		t.Errorf("fault %+v; want fired, healed after %v, no error", flt, partition)
	}
	// Nothing reaches the server until the heal, so no attempt begun after the fault is
	// granted before it (less the point at which the fault fired, taken just before acting).
	if grant, ok := flt.FirstGrant(); !ok || grant < partition-100*time.Millisecond {
		t.Errorf("first grant %v after the fault (%v); want one after the %v partition healed", grant, ok, partition)
	}
}
