package sweep

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// realStep runs each step as a short contention run on one hot key against srv: every worker
// holds the lock 1ms, so each added worker lengthens the queue and the acquire latency grows
// with the load, by however much this machine makes it.
func realStep(addrs []string) func(context.Context, Step) (results.Run, error) {
	return func(ctx context.Context, s Step) (results.Run, error) {
		d, err := drivers.Parse(s.Driver)
		if err != nil {
			return results.Run{}, err
		}
		return workloads.Run(ctx, workloads.Plan{
			Workload: workloads.Contention{},
			Config: workloads.Config{Concurrency: int(s.Load), Keys: 1, Hold: time.Millisecond,
				Duration: 400 * time.Millisecond, Warmup: 100 * time.Millisecond},
			Driver: d,
			Target: drivers.Config{Topology: "single", Addrs: addrs},
		})
	}
}

// checkKneeRule checks what the knee means against the measured data, whatever the numbers:
// every verdict fits its step's latency, the knee step is within the SLO, and the step after
// it was over, saturated or failed, or there was none.
func checkKneeRule(t *testing.T, s *results.Sweep, d results.SweepDriver) {
	t.Helper()
	for _, st := range d.Steps {
		switch st.Verdict {
		case results.VerdictOK:
			if st.LatencyUS > s.SLO.LimitUS {
				t.Errorf("%s step %d: ok with %s %vµs above the SLO %vµs", d.Driver, st.Step, s.SLO.Name, st.LatencyUS, s.SLO.LimitUS)
			}
		case results.VerdictOver:
			if st.LatencyUS <= s.SLO.LimitUS {
				t.Errorf("%s step %d: over with %s %vµs within the SLO %vµs", d.Driver, st.Step, s.SLO.Name, st.LatencyUS, s.SLO.LimitUS)
			}
		}
	}
	// The knee is the highest ok step: none above it, and none at all without one.
	for _, st := range d.Steps {
		if st.Verdict == results.VerdictOK && st.Step > d.KneeStep {
			t.Errorf("%s: step %d is ok above the knee (step %d)", d.Driver, st.Step, d.KneeStep)
		}
	}
	if d.KneeStep == 0 {
		return
	}
	k := d.Steps[d.KneeStep-1]
	if k.Step != d.KneeStep || k.Verdict != results.VerdictOK || k.LatencyUS > s.SLO.LimitUS || d.KneeLoad != s.Loads[d.KneeStep-1] {
		t.Errorf("%s: knee step %d (load %v) is %+v", d.Driver, d.KneeStep, d.KneeLoad, k)
	}
	if d.KneeStep < len(d.Steps) {
		if next := d.Steps[d.KneeStep]; next.Verdict == results.VerdictOK {
			t.Errorf("%s: the step after the knee (%d) is ok too: %+v", d.Driver, next.Step, next)
		}
	}
}

func TestRealConcurrencySweep(t *testing.T) {
	srv := redistest.NewServer(t)
	out, err := Run(t.Context(), Options{
		Mode: results.SweepConcurrency, Loads: []float64{1, 2, 4, 8, 16}, Drivers: []string{"lockcore", "naive"},
		// One worker waits for no one (p99 well under 1ms on a quiet machine); 16 wait for up
		// to 15 holds of 1ms each. The knee falls where this machine puts it.
		SLO:  SLO{Name: "p99", Percentile: 99, Limit: 8 * time.Millisecond},
		Step: realStep(srv.Addrs()),
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Failed {
		t.Fatalf("a step failed: %+v", out.Sweep.Drivers)
	}
	for _, d := range out.Sweep.Drivers {
		t.Logf("%s: %s, knee step %d, %s", d.Driver, verdicts(d), d.KneeStep, d.StopReason)
		// A machine loaded enough can put even one worker over the SLO: then there is no knee,
		// and the rule below still checks that every step was judged by its latency.
		if d.KneeStep == 0 {
			t.Logf("%s: no knee on this machine: every step over the SLO or saturated", d.Driver)
		}
		checkKneeRule(t, &out.Sweep, d)
	}
}

// An SLO nothing can meet stops every driver after its first step.
func TestRealEarlyStop(t *testing.T) {
	srv := redistest.NewServer(t)
	var calls int
	step := realStep(srv.Addrs())
	out, err := Run(t.Context(), Options{
		Mode: results.SweepConcurrency, Loads: []float64{1, 2, 4}, Drivers: []string{"naive"},
		SLO: SLO{Name: "p50", Percentile: 50, Limit: time.Microsecond},
		Step: func(ctx context.Context, s Step) (results.Run, error) {
			calls++
			return step(ctx, s)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Sweep.Drivers[0]
	if calls != 1 || len(d.Steps) != 1 || d.Steps[0].Verdict != results.VerdictOver || !d.StoppedEarly || d.KneeStep != 0 {
		t.Errorf("%d steps run, record %+v; want one step over the SLO and a stop", calls, d)
	}
}
