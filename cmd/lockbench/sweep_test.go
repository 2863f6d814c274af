package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compare"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

func TestSweepBadInput(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	notDir := filepath.Join(out, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		out  string // substring of stderr
	}{
		{[]string{"--slo", "p99"}, `--slo: SLO "p99": want PERCENTILE=DURATION`},
		{[]string{"--slo", "p99=5"}, "not a duration with a unit"},
		{[]string{"--slo", "p9=5ms"}, "ambiguous"},
		{[]string{"--slo", "p100=5ms"}, "read as 99.x"},
		{[]string{"--slo", "p99=0s"}, "must be positive"},
		{[]string{"--concurrency-steps", "4,2"}, "step 2 (2) is not above step 1 (4)"},
		{[]string{"--concurrency-steps", "0,2"}, "step 1 is 0"},
		{[]string{"--concurrency-steps", "1,x"}, "invalid argument"},
		{[]string{"--concurrency-steps", "1,200000"}, "at most 100000"},
		{[]string{"--concurrency-steps", "1,2", "--concurrency", "8"}, "takes them from --concurrency-steps"},
		{[]string{"--concurrency-steps", "1,2", "--rates", "100,200"}, "exclude each other"},
		{[]string{"--rates", "100,200", "--rate-from", "10"}, "not both"},
		{[]string{"--rate-from", "100"}, "needs both --rate-from and --rate-to"},
		{[]string{"--rates", "300,200"}, "--rates: step 2 (200) is not above step 1 (300)"},
		{[]string{"--rate-from", "100", "--rate-to", "50"}, "--rate-to 50"},
		{[]string{"--rate-from", "100", "--rate-to", "1000", "--steps", "1"}, "--steps 1"},
		{[]string{"--rates", "100,20000000"}, "rate steps: rate 2e+07: want more than 0 and at most"},
		{[]string{"--rates", "100,200", "--arrival", "bursty"}, `rate steps: arrival "bursty": want uniform or poisson`},
		{[]string{"--concurrency-steps", "1,2", "--arrival", "poisson"}, "--arrival paces an open loop"},
		{[]string{"--rate", "1000"}, "--rate is one run's rate"},
		{[]string{"--saturation-margin", "1"}, "--saturation-margin 1"},
		{[]string{"--saturation-margin", "0"}, "--saturation-margin 0"},
		{[]string{"--stop-factor", "0.5"}, "--stop-factor 0.5"},
		{[]string{"--repeat", "3"}, "--repeat is for lockbench run; a sweep repeats each step with --rounds"},
		{[]string{"--baseline", "naive"}, "--baseline is for lockbench run's ratios"},
		{[]string{"--threshold", "p99<5ms"}, "a sweep is gated on knee or capacity, not \"p99\""},
		{[]string{"--driver", "lockcore", "--threshold", "naive knee>=2"}, "naive is not among the swept drivers"},
		{[]string{"--threshold", "knee>=fast"}, "--threshold: \"knee>=fast\""},
		{[]string{"--driver", "nope"}, `lockbench sweep: --driver: unknown driver "nope"`},
		{[]string{"--duration", "0s"}, "--duration 0s"},
		{[]string{"--out", notDir}, "--out " + notDir},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--rounds", "0"}, "--rounds 0: want 1 to 20"},
		{[]string{"--rounds", "3", "--max-rounds", "2"}, "--max-rounds 2: want from --rounds (3)"},
		{[]string{"--precision", "-0.1"}, "--precision -0.1"},
		{[]string{"--precision", "0.0001"}, "want at least 0.001"},
		{[]string{"--budget", "-1m"}, "--budget -1m0s"},
		{[]string{"--rates", "100,200", "--noise-floor", "1"}, "--noise-floor 1"},
		{[]string{"--concurrency-steps", "1,2", "--noise-floor", "0.1"}, "--noise-floor is for rate sweeps"},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		args := append([]string{"sweep", "--out", out}, tc.args...)
		code := dispatch(args, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.out) || !strings.Contains(stderr.String(), "lockbench sweep --help") {
			t.Errorf("lockbench %q: exit %d, stderr %q; want exit %d containing %q", args, code, stderr.String(), exitUsage, tc.out)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"sweep", "--help"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "--concurrency-steps") || strings.Contains(stdout.String(), "--repeat") {
		t.Errorf("sweep --help: exit %d; want the sweep flags without run's --repeat:\n%s", code, stdout.String())
	}
}

// An --addr that does not answer is bad input: nothing is measured and the exit code is 2.
func TestSweepUnreachableAddr(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"sweep", "--addr", "127.0.0.1:1", "--out", t.TempDir(), "--concurrency-steps", "1"}, &stdout, &stderr)
	if code != exitUsage || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and no summary", code, stdout.String(), stderr.String(), exitUsage)
	}
}

// sweepFile reads the one result file in dir, also through compare's loader (old readers and
// compare must still load a sweep).
func sweepFile(t *testing.T, dir string) *results.File {
	t.Helper()
	f := readResult(t, dir)
	if f.Sweep == nil {
		t.Fatal("result file has no sweep record")
	}
	if _, err := compare.Load(dir); err != nil {
		t.Fatalf("compare cannot load the sweep: %v", err)
	}
	// Every round of every step that ran, and every noise floor, is a run of the file, and
	// points at it.
	runs := len(f.Sweep.NoiseFloor)
	for _, d := range f.Sweep.Drivers {
		for _, st := range d.Steps {
			rounds := st.Runs
			if len(rounds) == 0 {
				rounds = []int{st.Run}
			}
			runs += len(rounds)
			for _, i := range rounds {
				r := f.Runs[i]
				if r.Driver != d.Driver || (f.Sweep.Mode == results.SweepConcurrency && float64(r.Concurrency) != st.Load) ||
					(f.Sweep.Mode == results.SweepRate && r.TargetRate != st.Load) {
					t.Errorf("%s step %d (load %v) points at run %d: %s with %d workers at %v/s", d.Driver, st.Step, st.Load, i, r.Driver, r.Concurrency, r.TargetRate)
				}
			}
		}
	}
	if runs != len(f.Runs) {
		t.Errorf("%d runs in the sweep record, %d in the file", runs, len(f.Runs))
	}
	return f
}

// A closed-loop sweep on one hot key held 5ms: each added worker waits for the others' holds,
// so the acquire p99 grows with the workers (16 workers wait at least 15 holds) and the knee
// falls where this machine puts it. The test checks the knee rule against the data, not numbers.
// The SLO of 50ms leaves one worker room on a loaded CI machine (seen: lockcore's one worker at
// a p99 of 4.49ms over a 4ms SLO, and of 11.3ms over 10ms with 1ms holds, pinned to a shared CPU).
func TestSweepFindsTheKnee(t *testing.T) {
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "sweep", "--driver", "lockcore,naive", "--concurrency-steps", "1,2,4,8,16",
		"--keys", "1", "--hold", "5ms", "--duration", "500ms", "--warmup", "100ms", "--slo", "p99=50ms", "--out", dir,
		// Not pinned: --pin auto confines lockbench to one CPU that the other test packages share,
		// and one worker's p99 then went past a 10 ms SLO (CI, 2026-11-27). Holds of 5 ms against
		// 50 ms keep the knee in the middle of the steps with room for a loaded machine.
		"--pin", "off",
		"--rounds", "1", "--precision", "0", // one run a step: the rounds and refinement have a test of their own
		// Knee gates: the first holds (a knee of at least one worker), the second cannot (16 at most).
		"--threshold", "lockcore knee>=1", "--threshold", "knee>=1000")
	code, out := finish(t, cmd, errb)
	if code != exitThresholds {
		t.Fatalf("exit %d, want %d (the knee gate knee>=1000 fails)\n%s\n%s", code, exitThresholds, out, errb)
	}
	for _, want := range []string{"thresholds: 1 of 2 passed", "ok    lockcore knee>=1: lockcore ", "FAIL  knee>=1000: lockcore ", "FAIL  knee>=1000: naive "} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	f := sweepFile(t, dir)
	if !f.Complete || f.Sweep.Mode != results.SweepConcurrency || f.Sweep.SLO.Name != "p99" || f.Sweep.SLO.LimitUS != 50000 {
		t.Fatalf("complete %v, sweep %+v", f.Complete, f.Sweep)
	}
	for _, d := range f.Sweep.Drivers {
		if d.KneeStep == 0 {
			t.Errorf("%s: no knee; one worker on one key should stay within 50ms\n%s", d.Driver, out)
			continue
		}
		k := d.Steps[d.KneeStep-1]
		if p := f.Runs[k.Run].AcquireLatencyUS.P99; k.Verdict != results.VerdictOK || p > 50000 || p != k.LatencyUS {
			t.Errorf("%s: knee step %d %+v, its run's p99 %vµs", d.Driver, d.KneeStep, k, p)
		}
		if d.KneeStep < len(d.Steps) {
			next := d.Steps[d.KneeStep]
			p := f.Runs[next.Run].AcquireLatencyUS.P99
			if next.Verdict == results.VerdictOK || (next.Verdict == results.VerdictOver && p <= 50000) {
				t.Errorf("%s: the step after the knee is %+v with p99 %vµs; want over the SLO, or saturated", d.Driver, next, p)
			}
		}
		if !strings.Contains(out, d.Driver+"  ") {
			t.Errorf("summary lacks %s:\n%s", d.Driver, out)
		}
	}
	for _, want := range []string{"knee: at or above the highest load achieved with p99 <= 50.0ms", "(knee)", "workers"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"sweep step 1/5 lockcore 1 worker", "elapsed, at most", "acq/s, p99"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, errb)
		}
	}
	assertServerGone(t, errb.String())
}

// An SLO nothing meets stops every driver after its first step.
func TestSweepStopsEarly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "sweep", "--driver", "lockcore,naive", "--concurrency-steps", "1,2,4,8",
		"--keys", "100", "--duration", "300ms", "--warmup", "0s", "--slo", "p50=1us", "--out", dir, "--rounds", "1")
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	f := sweepFile(t, dir)
	if len(f.Runs) != 2 {
		t.Errorf("%d runs; want one step per driver", len(f.Runs))
	}
	for _, d := range f.Sweep.Drivers {
		if len(d.Steps) != 1 || d.Steps[0].Verdict != results.VerdictOver || !d.StoppedEarly || d.KneeStep != 0 || !strings.Contains(d.StopReason, "more than 4 × the SLO") {
			t.Errorf("%s: %+v; want one step over by more than 4 ×, stopped early, no knee", d.Driver, d)
		}
	}
	if !strings.Contains(out, "none") || !strings.Contains(out, "stopped early: step 1") {
		t.Errorf("summary:\n%s", out)
	}
}

// Ctrl-C during a step: the steps done and the interrupted one are written, marked incomplete.
func TestSweepCtrlC(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "sweep", "--driver", "naive", "--concurrency-steps", "1,2,4",
		"--keys", "100", "--duration", "30s", "--warmup", "0s", "--out", dir, "--rounds", "1")
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errb.String(), "[1/3]") {
		if time.Now().After(deadline) {
			t.Fatalf("sweep did not start:\n%s", errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second)
	out := interruptRun(t, cmd, errb)
	f := sweepFile(t, dir)
	d := f.Sweep.Drivers[0]
	if f.Complete || len(f.Runs) != 1 || f.Runs[0].Complete || len(d.Steps) != 1 || d.Steps[0].Verdict != results.VerdictIncomplete || f.Runs[0].Acquisitions == 0 {
		t.Fatalf("after Ctrl-C: complete %v, %d runs, record %+v", f.Complete, len(f.Runs), d)
	}
	if !strings.Contains(out, "incomplete") {
		t.Errorf("summary does not show the interrupted step:\n%s", out)
	}
	assertServerGone(t, errb.String())
}

// An open-loop sweep: every step is a run at its target rate, and the knee rule holds.
func TestSweepRates(t *testing.T) {
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "sweep", "--driver", "lockcore,naive", "--rates", "200,400,800", "--arrival", "poisson",
		"--keys", "100", "--duration", "500ms", "--warmup", "100ms", "--slo", "p90=1s", "--out", dir,
		"--rounds", "1", "--noise-floor", "0", "--precision", "0")
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	f := sweepFile(t, dir)
	if f.Sweep.Mode != results.SweepRate || len(f.Runs) == 0 {
		t.Fatalf("sweep %+v, %d runs", f.Sweep, len(f.Runs))
	}
	for _, d := range f.Sweep.Drivers {
		for _, st := range d.Steps {
			r := f.Runs[st.Run]
			if r.Pacing != results.PacingOpen || r.Arrival != "poisson" || r.TargetRate != st.Load || st.ThroughputPerS != r.AchievedRate {
				t.Errorf("%s step %d: run pacing %q target %v achieved %v; step load %v achieved %v", d.Driver, st.Step, r.Pacing, r.TargetRate, r.AchievedRate, st.Load, st.ThroughputPerS)
			}
		}
		// A knee needs an achieved step within the SLO; the next is not ok.
		if d.KneeStep > 0 {
			if k := d.Steps[d.KneeStep-1]; k.Verdict != results.VerdictOK || k.ThroughputPerS < 0.95*k.Load {
				t.Errorf("%s: knee %+v", d.Driver, k)
			}
			if d.KneeStep < len(d.Steps) && d.Steps[d.KneeStep].Verdict == results.VerdictOK {
				t.Errorf("%s: the step after the knee is ok", d.Driver)
			}
		}
	}
	if !strings.Contains(out, "target/s") {
		t.Errorf("summary:\n%s", out)
	}
}

// One worker holding each lock 5ms cannot start 1000 attempts a second: the first step is
// saturated and the driver stops there.
func TestSweepRateSaturates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "sweep", "--driver", "naive", "--rates", "1000,2000", "--concurrency", "1", "--hold", "5ms",
		"--keys", "100", "--duration", "500ms", "--warmup", "0s", "--slo", "p99=10s", "--out", dir,
		"--rounds", "1", "--noise-floor", "0", "--precision", "0")
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	f := sweepFile(t, dir)
	d := f.Sweep.Drivers[0]
	if len(d.Steps) != 1 || d.Steps[0].Verdict != results.VerdictSaturated || !d.StoppedEarly || d.KneeStep != 0 {
		t.Errorf("record %+v; want one saturated step, stopped early, no knee\n%s", d, out)
	}
}

// On an attached deployment with a workload one driver cannot run: that driver is skipped (in
// the file's skips and the sweep record), the other steps on, and lockbench's keys are gone
// afterwards while the user's stay.
func TestSweepAttachedWithSkip(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Do(ctx, rdb.B().Set().Key("user:keep").Value("1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "sweep", "--addr", srv.Addrs()[0], "--workload", "rw", "--driver", "naive,lockcore",
		"--concurrency-steps", "1,4", "--keys", "20", "--hold", "100us", "--duration", "300ms", "--warmup", "0s", "--slo", "p99=1s", "--out", dir,
		"--rounds", "1", "--precision", "0")
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	f := sweepFile(t, dir)
	if len(f.Skipped) != 1 || f.Skipped[0].Driver != "naive" || f.Topology.Provider != "attached" {
		t.Errorf("skipped %+v, topology %+v", f.Skipped, f.Topology)
	}
	var naive, lockcore results.SweepDriver
	for _, d := range f.Sweep.Drivers {
		if d.Driver == "naive" {
			naive = d
		} else {
			lockcore = d
		}
	}
	if len(naive.Steps) != 0 || !strings.HasPrefix(naive.StopReason, "skipped: ") {
		t.Errorf("naive: %+v", naive)
	}
	if len(lockcore.Steps) != 2 || len(f.Runs) != 2 {
		t.Errorf("lockcore: %+v; %d runs", lockcore, len(f.Runs))
	}
	keys, err := rdb.Do(ctx, rdb.B().Keys().Pattern("*").Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{"user:keep"}) {
		t.Errorf("keys after the sweep %v, want only user:keep", keys)
	}
}

// --dry-run prints the plan and its most time, measures nothing and starts no server.
func TestSweepDryRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"sweep", "--dry-run", "--driver", "lockcore,naive", "--rate-from", "5000", "--rate-to", "160000", "--steps", "6",
		"--slo", "p99=2ms", "--duration", "3s", "--warmup", "1s", "--out", t.TempDir()}, &stdout, &stderr)
	if code != exitOK || stderr.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	// 5s a run: 2 floors, 36 to 72 grid runs, 4 bisections × 2 drivers × 6 rounds at most; 7 s of
	// round-trip probes (3 s back to back, 3 + 0.4 + 0.2 + 0.1 s paced).
	for _, want := range []string{"5000, 10000, 20000, 40000, 80000, 160000", "rounds: 3 per step, up to 6", "within 5%, at most 10m0s",
		"at most 10m17s", "2 noise-floor runs", "round-trip probes 7s", "then paced at 250, 5000, 10000, 20000/s", "36 to 72 grid runs", "up to 4 refined steps per driver"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout.String())
		}
	}
}

// The repeatable sweep end to end, briefly: a noise floor, two rounds a step with an interval,
// a refined bracket, every round a run of the file; the rule checked against the data.
func TestSweepRoundsAndRefinement(t *testing.T) {
	dir := t.TempDir()
	errb := &syncBuffer{}
	// One key held 1ms: about 1000/s at most, so the steps from 200/s to 3200/s cross it and
	// the knee is bracketed wherever this machine puts it.
	cmd := lockbench(t, errb, "sweep", "--driver", "lockcore", "--rates", "200,800,3200", "--keys", "1", "--hold", "1ms",
		"--concurrency", "16", "--duration", "400ms", "--warmup", "0s", "--slo", "p99=50ms", "--rounds", "2", "--max-rounds", "3",
		"--precision", "0.5", "--budget", "20s", "--out", dir)
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	f := sweepFile(t, dir)
	s := f.Sweep
	if s.Rounds != 2 || s.MaxRounds != 3 || s.Precision != 0.5 || len(s.NoiseFloor) != 1 || s.NoiseFloor[0].Load != 10 || s.PlannedMaxS <= 0 {
		t.Fatalf("sweep record %+v", s)
	}
	d := s.Drivers[0]
	for _, st := range d.Steps {
		if st.Verdict != results.VerdictFailed && (len(st.Runs) < 2 && st.Verdict != results.VerdictSaturated && st.Verdict != results.VerdictOver) {
			t.Errorf("step %+v: want 2 or 3 rounds", st)
		}
		if st.Interval != nil && !(st.Interval.LowUS <= st.Interval.HighUS) {
			t.Errorf("step %d: interval %+v", st.Step, st.Interval)
		}
		switch iv := st.Interval; {
		case iv == nil:
		case st.Verdict == results.VerdictOK && iv.HighUS > s.SLO.LimitUS,
			st.Verdict == results.VerdictOver && iv.LowUS <= s.SLO.LimitUS,
			st.Verdict == results.VerdictUncertain && !(iv.LowUS <= s.SLO.LimitUS && iv.HighUS > s.SLO.LimitUS):
			t.Errorf("step %d: %s with interval %+v against %vµs", st.Step, st.Verdict, iv, s.SLO.LimitUS)
		}
	}
	b := d.Knee
	if b == nil || b.Refined == "" {
		t.Fatalf("no bracket, or no word on its refinement: %+v", d)
	}
	if b.OKStep > 0 && b.OverStep > 0 && b.Refined == "within the precision" && b.Width > 0.5 {
		t.Errorf("bracket %+v: refined to the precision, yet wider", b)
	}
	// The knee step's runs measured the server's CPU: the projection sits beside the knee, made
	// from the rounds whose Redis was busy enough to project from (results.minUtilization, 1%).
	// The one key's hand-over keeps Redis near that line here (0.7% to 1.5% of a core at
	// 800/s in runs on this machine), so a knee whose rounds were all below it has none, and
	// says so by leaving it out.
	if b.OKStep > 0 {
		projectable := false
		for _, st := range d.Steps {
			if st.Step != b.OKStep {
				continue
			}
			for _, i := range st.Runs {
				if f.Runs[i].Capacity != nil {
					projectable = true
				}
			}
		}
		has := b.ProjectedServerCapacityPerS > 0 && strings.Contains(out, "projected server-bound capacity")
		if projectable != has {
			t.Errorf("bracket %+v: a projection beside the knee %v, from rounds with one %v:\n%s", b, has, projectable, out)
		}
	}
	for _, want := range []string{"noise floor at 10/s", "p99 interval", "rounds", "knee: at or above"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errb.String(), "sweep plan: about") || !strings.Contains(errb.String(), "at most") {
		t.Errorf("progress lacks the plan:\n%s", errb)
	}
	t.Logf("bracket %+v\n%s", b, out)
}
