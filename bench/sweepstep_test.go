package bench

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/sweep"
	"github.com/lockbench/lockbench/workloads"
)

// A sweep's step runs at its load: workers for a concurrency sweep, a rate for an open loop;
// a driver that cannot run the workload is skipped and collected.
func TestSweepStepsRun(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	s, err := NewSession(tg, Spec{Drivers: []string{"lockcore"}, Config: short()}, Options{Reporter: &lines{}})
	if err != nil {
		t.Fatal(err)
	}
	closed := &SweepSteps{Session: s, Mode: results.SweepConcurrency}
	run, err := closed.Run(t.Context(), sweep.Step{Driver: "lockcore", Index: 1, Load: 3, Round: 1, Seq: 1, Total: 2})
	if err != nil || run.Concurrency != 3 || run.Acquisitions == 0 {
		t.Errorf("concurrency step of 3: run of %d workers, %d acquisitions, %v; want 3 workers that acquired", run.Concurrency, run.Acquisitions, err)
	}
	open := &SweepSteps{Session: s, Mode: results.SweepRate}
	run, err = open.Run(t.Context(), sweep.Step{Driver: "lockcore", Index: 1, Load: 200, Round: 1, Seq: 2, Total: 2})
	if err != nil || run.TargetRate != 200 {
		t.Errorf("rate step of 200/s: run at %v/s, %v; want the open loop at 200/s", run.TargetRate, err)
	}

	s, err = NewSession(tg, Spec{Drivers: []string{"naive"}, Workload: "reentrancy", Config: short()}, Options{Reporter: &lines{}})
	if err != nil {
		t.Fatal(err)
	}
	var skipped []results.Skip
	skips := &SweepSteps{Session: s, Mode: results.SweepConcurrency, Skipped: &skipped}
	if _, err := skips.Run(t.Context(), sweep.Step{Driver: "naive", Index: 1, Load: 1, Round: 1}); !errors.Is(err, drivers.ErrUnsupported) || len(skipped) != 1 {
		t.Errorf("naive on reentrancy: %v, skips %+v; want drivers.ErrUnsupported and the skip collected", err, skipped)
	}
}

// OverSLO stops a run only once after has passed and the SLO percentile is above the limit.
func TestOverSLO(t *testing.T) {
	t.Parallel()
	slo := sweep.SLO{Name: "p99", Percentile: 99, Limit: 5 * time.Millisecond}
	check := OverSLO(slo, time.Second)
	h := hdrhistogram.New(1, 60_000_000, 3)
	for range 100 {
		_ = h.RecordValue(20_000) // 20ms
	}
	fast := hdrhistogram.New(1, 60_000_000, 3)
	_ = fast.RecordValue(1_000)
	for _, c := range []struct {
		name string
		l    workloads.Live
		want string // substring; "" for no stop
	}{
		{"before --abort-after", workloads.Live{Elapsed: 500 * time.Millisecond, Acquire: h}, ""},
		{"no acquisitions yet", workloads.Live{Elapsed: 2 * time.Second, Acquire: hdrhistogram.New(1, 60_000_000, 3)}, ""},
		{"within the SLO", workloads.Live{Elapsed: 2 * time.Second, Acquire: fast}, ""},
		{"over the SLO", workloads.Live{Elapsed: 2 * time.Second, Acquire: h}, "over the SLO's 5ms after 2.0s"},
	} {
		got := check("lockcore", c.l)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q; want %q", c.name, got, c.want)
		}
	}
}

// Sweep runs every step into the file, records the sweep and the deployment, and refuses a
// spec the session refuses before anything runs.
func TestSweep(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	o := sweep.Options{Mode: results.SweepConcurrency, Loads: []float64{1, 2}, Drivers: []string{"lockcore"},
		SLO: sweep.SLO{Name: "p99", Percentile: 99, Limit: time.Second}, Rounds: 1, MaxRounds: 1}
	file := &results.File{}
	out, err := Sweep(t.Context(), tg, Spec{Drivers: []string{"lockcore"}, Config: short()}, o, Options{Reporter: &lines{}}, file)
	if err != nil || out == nil || len(file.Runs) != 2 || file.Sweep == nil || !file.Complete || file.RedisVersion == "" {
		t.Errorf("Sweep: %v; file: %d runs, sweep %v, complete %v, version %q; want 2 complete steps", err, len(file.Runs), file.Sweep != nil, file.Complete, file.RedisVersion)
	}
	if out, err := Sweep(t.Context(), tg, Spec{}, o, Options{Reporter: &lines{}}, &results.File{}); out != nil || !errors.Is(err, ErrBadSpec) {
		t.Errorf("Sweep(no drivers) = %v, %v; want nil, ErrBadSpec", out, err)
	}
}
