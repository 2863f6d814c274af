package sweep

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fakeRun is a complete one-second run of n acquisitions whose acquire latency is lat for
// every acquisition but the slowest 0.5%, which take 10 × lat (so p99 = lat, p999 = 10 × lat).
func fakeRun(t *testing.T, driver string, n int, lat time.Duration) results.Run {
	t.Helper()
	rec := results.NewRecorder()
	for i := range n {
		l := lat
		if i%200 == 0 {
			l = 10 * lat
		}
		rec.Record(l, time.Microsecond, l)
	}
	run := results.Run{Driver: driver, Complete: true}
	if err := run.Fill(results.Merge(rec), time.Second); err != nil {
		t.Fatal(err)
	}
	return run
}

// model is a fake deployment: at load l a driver achieves tput(l) acquisitions per second
// with p99 lat(l).
type model struct {
	tput func(driver string, load float64) float64
	lat  func(driver string, load float64) time.Duration
}

func (m model) step(t *testing.T, calls *[]Step) func(context.Context, Step) (results.Run, error) {
	return func(_ context.Context, s Step) (results.Run, error) {
		*calls = append(*calls, s)
		return fakeRun(t, s.Driver, int(m.tput(s.Driver, s.Load)), m.lat(s.Driver, s.Load)), nil
	}
}

func mustSLO(t *testing.T, s string) SLO {
	t.Helper()
	slo, err := ParseSLO(s)
	if err != nil {
		t.Fatal(err)
	}
	return slo
}

func driverRec(t *testing.T, out *Outcome, name string) results.SweepDriver {
	t.Helper()
	for _, d := range out.Sweep.Drivers {
		if d.Driver == name {
			return d
		}
	}
	t.Fatalf("no record of driver %s in %+v", name, out.Sweep.Drivers)
	return results.SweepDriver{}
}

func verdicts(d results.SweepDriver) string {
	var v []string
	for _, st := range d.Steps {
		v = append(v, st.Verdict)
	}
	return strings.Join(v, ",")
}

// Closed loop: latency grows with the workers; "fast" stays within the SLO longer, "slow" goes
// over by more than the stop factor and stops early. Steps interleave the drivers.
func TestConcurrencyKneeAndEarlyStop(t *testing.T) {
	m := model{
		tput: func(d string, l float64) float64 { return 1000 * min(l, 8) },
		lat: func(d string, l float64) time.Duration {
			if d == "slow" {
				return time.Duration(l) * 2 * time.Millisecond // 2, 4, 8, 16, 32ms
			}
			return time.Duration(l) * 500 * time.Microsecond // 0.5 … 8ms
		},
	}
	var calls []Step
	out, err := Run(context.Background(), Options{
		Mode: results.SweepConcurrency, Loads: []float64{1, 2, 4, 8, 16}, Drivers: []string{"fast", "slow"},
		SLO: mustSLO(t, "p99=3ms"), Step: m.step(t, &calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	fast, slow := driverRec(t, out, "fast"), driverRec(t, out, "slow")
	// fast: 0.5, 1, 2 ok; 4ms over; 8ms over (< 12ms); 16 workers: saturated? No: tput flat at
	// 8000, not below the best. So it runs every step.
	if got := verdicts(fast); got != "ok,ok,ok,over,over" || fast.KneeStep != 3 || fast.KneeLoad != 4 || fast.StoppedEarly {
		t.Errorf("fast: %s knee %d (%v) stopped early %v", got, fast.KneeStep, fast.KneeLoad, fast.StoppedEarly)
	}
	// slow: 2ms ok, 4ms over, 8ms over, 16ms > 4 × 3ms: stop after step 4.
	if got := verdicts(slow); got != "ok,over,over,over" || slow.KneeStep != 1 || !slow.StoppedEarly || !strings.Contains(slow.StopReason, "step 4: p99 16.0ms is more than 4 × the SLO's 3.00ms") {
		t.Errorf("slow: %s knee %d stopped early %v (%s)", got, slow.KneeStep, slow.StoppedEarly, slow.StopReason)
	}
	var order []string
	for _, c := range calls {
		order = append(order, fmt.Sprintf("%s@%v", c.Driver, c.Load))
	}
	if want := "fast@1 slow@1 fast@2 slow@2 fast@4 slow@4 fast@8 slow@8 fast@16"; strings.Join(order, " ") != want {
		t.Errorf("step order %v; want %s", order, want)
	}
	if len(out.Runs) != len(calls) || out.Failed {
		t.Errorf("%d runs for %d steps, failed %v", len(out.Runs), len(calls), out.Failed)
	}
	for _, d := range out.Sweep.Drivers {
		for _, st := range d.Steps {
			if r := out.Runs[st.Run]; r.Driver != d.Driver || st.LatencyUS != r.AcquireLatencyUS.P99 {
				t.Errorf("%s step %d points at run %d (%s, p99 %v); latency %v", d.Driver, st.Step, st.Run, r.Driver, r.AcquireLatencyUS.P99, st.LatencyUS)
			}
		}
	}
}

// Concurrency: more workers that get less done are past the peak. One such step may be a
// shared machine's noise and is forgiven; two in a row stop the driver.
func TestConcurrencyRetrogradeIsSaturated(t *testing.T) {
	tput := map[float64]float64{1: 1000, 2: 2000, 4: 1500, 8: 2100, 16: 1960, 32: 1500, 64: 1000, 128: 500}
	m := model{
		tput: func(_ string, l float64) float64 { return tput[l] },
		lat:  func(string, float64) time.Duration { return time.Millisecond },
	}
	var calls []Step
	out, err := Run(context.Background(), Options{
		Mode: results.SweepConcurrency, Loads: []float64{1, 2, 4, 8, 16, 32, 64, 128}, Drivers: []string{"a"},
		SLO: mustSLO(t, "p99=5ms"), Step: m.step(t, &calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	// 1500 is 25% below 2000: saturated, but the driver goes on; 2100 is a new best, ok;
	// 1960 is 7% below 2100: saturated; 1500 too, the second in a row: stop.
	a := driverRec(t, out, "a")
	if got := verdicts(a); got != "ok,ok,saturated,ok,saturated,saturated" || a.KneeStep != 4 || !a.StoppedEarly ||
		!strings.Contains(a.StopReason, "step 6: second saturated step in a row: 1500 acq/s is 29% below the best earlier step's 2100") {
		t.Errorf("%s knee %d stopped %v: %s", got, a.KneeStep, a.StoppedEarly, a.StopReason)
	}
	if st := a.Steps[2]; !strings.Contains(st.Reason, "25% below the best earlier step's 2000: more workers got less done") {
		t.Errorf("step 3 reason %q", st.Reason)
	}
}

// Open loop: a step whose achieved rate falls short of the target by more than the margin is
// saturated whatever its latency, and the driver stops.
func TestRateSaturation(t *testing.T) {
	m := model{
		tput: func(_ string, l float64) float64 { return min(l, 3000) },
		lat:  func(string, float64) time.Duration { return 100 * time.Microsecond },
	}
	var calls []Step
	out, err := Run(context.Background(), Options{
		Mode: results.SweepRate, Loads: []float64{1000, 2000, 3100, 4000, 8000}, Drivers: []string{"a"},
		SLO: mustSLO(t, "p999=5ms"), Step: m.step(t, &calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	// 3000 of 3100 is 3% short: achieved. 3000 of 4000 is 25% short: saturated.
	a := driverRec(t, out, "a")
	if got := verdicts(a); got != "ok,ok,ok,saturated" || a.KneeLoad != 3100 || len(calls) != 4 {
		t.Errorf("%s knee %v after %d steps", got, a.KneeLoad, len(calls))
	}
	if st := a.Steps[3]; !strings.Contains(st.Reason, "achieved 3000 acq/s, 25% below the target 4000/s") {
		t.Errorf("reason %q", st.Reason)
	}
	// p999 is read from the histogram: 10 × the bulk's latency.
	if st := a.Steps[0]; st.LatencyUS < 990 || st.LatencyUS > 1010 {
		t.Errorf("p999 %vµs; want about 1000µs", st.LatencyUS)
	}
}

// Open loop: the pacer's account counts too. A step that kept its rate but started more than
// the margin of its attempts late (every worker busy) is saturated; a few late ones are not.
func TestRateScheduleNotKept(t *testing.T) {
	late := map[float64]int64{1000: 3, 2000: 300}
	step := func(_ context.Context, s Step) (results.Run, error) {
		r := fakeRun(t, s.Driver, int(s.Load), time.Millisecond)
		r.Pacing, r.TargetRate, r.AchievedRate, r.Late = results.PacingOpen, s.Load, s.Load, late[s.Load]
		r.Saturated = r.Late > 0
		return r, nil
	}
	out, err := Run(context.Background(), Options{
		Mode: results.SweepRate, Loads: []float64{1000, 2000, 4000}, Drivers: []string{"a"}, SLO: mustSLO(t, "p99=5ms"), Step: step,
	})
	if err != nil {
		t.Fatal(err)
	}
	a := driverRec(t, out, "a")
	if got := verdicts(a); got != "ok,saturated" || a.KneeStep != 1 || !strings.Contains(a.StopReason, "15% of the schedule not kept (300 attempts late, 0 dropped") {
		t.Errorf("%s knee %d: %s", got, a.KneeStep, a.StopReason)
	}
}

// The knee is the highest ok step, even above a step that went over (noise); the summary says so.
func TestKneeAboveADip(t *testing.T) {
	lat := map[float64]time.Duration{1: time.Millisecond, 2: 6 * time.Millisecond, 4: 4 * time.Millisecond, 8: 9 * time.Millisecond}
	m := model{
		tput: func(_ string, l float64) float64 { return 1000 * l },
		lat:  func(_ string, l float64) time.Duration { return lat[l] },
	}
	var calls []Step
	out, err := Run(context.Background(), Options{
		Mode: results.SweepConcurrency, Loads: []float64{1, 2, 4, 8}, Drivers: []string{"a"},
		SLO: mustSLO(t, "p99=5ms"), Step: m.step(t, &calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	a := driverRec(t, out, "a")
	if got := verdicts(a); got != "ok,over,ok,over" || a.KneeStep != 3 || a.StoppedEarly {
		t.Errorf("%s knee %d stopped early %v", got, a.KneeStep, a.StoppedEarly)
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, &out.Sweep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "not one crossing of the SLO: step 2 (2 workers), below the knee, was over (p99 6.00ms)") ||
		!strings.Contains(buf.String(), "warning: a: p99 does not rise steadily with the load") {
		t.Errorf("summary does not note the dip:\n%s", buf.String())
	}
	if a.Knee == nil || !slices.Equal(a.Knee.Crossings, []int{2}) {
		t.Errorf("knee %+v: want crossings [2]", a.Knee)
	}
}

// TestCrossings: the steps that contradict one crossing of the SLO, on either side of the
// bracket, as the sweeps of lockcore's open loop that found three knees (docs/findings.md).
func TestCrossings(t *testing.T) {
	st := func(n int, load float64, v string) results.SweepStep {
		return results.SweepStep{Step: n, Load: load, Verdict: v}
	}
	for _, c := range []struct {
		name  string
		steps []results.SweepStep
		want  []int
	}{
		{"monotonic", []results.SweepStep{st(1, 5000, "ok"), st(2, 10000, "ok"), st(3, 20000, "over"), st(4, 40000, "saturated")}, nil},
		{"uncertain below the knee", []results.SweepStep{st(1, 5000, "ok"), st(2, 10000, "uncertain"), st(3, 20000, "ok"), st(4, 40000, "over")}, []int{2}},
		{"uncertain above an over", []results.SweepStep{st(1, 5000, "ok"), st(2, 10000, "ok"), st(3, 20000, "over"), st(4, 40000, "uncertain"), st(5, 80000, "saturated")}, []int{4}},
		{"an uncertain upper end is noise, not a crossing", []results.SweepStep{st(1, 5000, "ok"), st(2, 10000, "uncertain"), st(3, 20000, "uncertain")}, nil},
		{"failed and interrupted steps say nothing", []results.SweepStep{st(1, 5000, "failed"), st(2, 10000, "incomplete"), st(3, 20000, "ok"), st(4, 40000, "over")}, nil},
		{"no ok step: an uncertain above an over still is one", []results.SweepStep{st(1, 5000, "over"), st(2, 10000, "uncertain")}, []int{2}},
	} {
		got := stepNumbers(crossings(c.steps, bracket(c.steps)))
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%s: crossings %v, want %v", c.name, got, c.want)
		}
	}
}

// A skipped driver stops at once; a failed step (errors) stops its driver and marks the
// outcome failed; the other driver goes on.
func TestSkipAndFailure(t *testing.T) {
	step := func(_ context.Context, s Step) (results.Run, error) {
		switch {
		case s.Driver == "skipme":
			return results.Run{}, fmt.Errorf("%w: cannot do rw locks", drivers.ErrUnsupported)
		case s.Driver == "broken" && s.Index == 2:
			r := fakeRun(t, s.Driver, 100, time.Millisecond)
			r.Errors = 3
			return r, nil
		case s.Driver == "unreachable" && s.Index == 2:
			return results.Run{}, errors.New("connection refused")
		}
		return fakeRun(t, s.Driver, 1000*int(s.Load), time.Millisecond), nil
	}
	out, err := Run(context.Background(), Options{
		Mode: results.SweepConcurrency, Loads: []float64{1, 2, 3}, Drivers: []string{"skipme", "broken", "unreachable", "fine"},
		SLO: mustSLO(t, "p99=5ms"), Step: step,
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := driverRec(t, out, "skipme"); len(d.Steps) != 0 || d.StopReason != "skipped: cannot do rw locks" || d.KneeStep != 0 {
		t.Errorf("skipme: %+v", d)
	}
	if d := driverRec(t, out, "broken"); verdicts(d) != "ok,failed" || d.KneeStep != 1 || !strings.Contains(d.StopReason, "3 errors") {
		t.Errorf("broken: %s %+v", verdicts(d), d)
	}
	if d := driverRec(t, out, "unreachable"); verdicts(d) != "ok,failed" || d.Steps[1].Run != -1 || !strings.Contains(d.StopReason, "connection refused") {
		t.Errorf("unreachable: %s %+v", verdicts(d), d)
	}
	if d := driverRec(t, out, "fine"); verdicts(d) != "ok,ok,ok" || d.KneeStep != 3 {
		t.Errorf("fine: %s %+v", verdicts(d), d)
	}
	if !out.Failed || len(out.Runs) != 2+1+3 {
		t.Errorf("failed %v, %d runs", out.Failed, len(out.Runs))
	}
}

// ErrAbort ends the sweep with the error; what ran before is kept.
func TestAbort(t *testing.T) {
	step := func(_ context.Context, s Step) (results.Run, error) {
		if s.Index == 2 {
			return results.Run{}, fmt.Errorf("%w: fanout 4 above keys 2", ErrAbort)
		}
		return fakeRun(t, s.Driver, 1000, time.Millisecond), nil
	}
	out, err := Run(context.Background(), Options{
		Mode: results.SweepConcurrency, Loads: []float64{1, 2}, Drivers: []string{"a"}, SLO: mustSLO(t, "p99=5ms"), Step: step,
	})
	if !errors.Is(err, ErrAbort) || out == nil || len(out.Runs) != 1 || len(out.Sweep.Drivers) != 1 {
		t.Fatalf("err %v, outcome %+v", err, out)
	}
}

// An interrupt during a step keeps that step's (incomplete) run and starts no other.
func TestInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	step := func(_ context.Context, s Step) (results.Run, error) {
		r := fakeRun(t, s.Driver, 1000, time.Millisecond)
		if s.Driver == "a" && s.Index == 2 {
			cancel()
			r.Complete, r.Incomplete = false, "interrupted after 0.4s of 1s"
		}
		return r, nil
	}
	out, err := Run(ctx, Options{
		Mode: results.SweepConcurrency, Loads: []float64{1, 2, 4}, Drivers: []string{"a", "b"}, SLO: mustSLO(t, "p99=5ms"), Step: step,
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b := driverRec(t, out, "a"), driverRec(t, out, "b")
	if verdicts(a) != "ok,incomplete" || a.KneeStep != 1 || !strings.Contains(a.StopReason, "interrupted after 0.4s") {
		t.Errorf("a: %s %+v", verdicts(a), a)
	}
	if verdicts(b) != "ok" || b.StopReason != "interrupted before step 2" || !b.StoppedEarly {
		t.Errorf("b: %s %+v", verdicts(b), b)
	}
	if len(out.Runs) != 3 || out.Failed {
		t.Errorf("%d runs, failed %v", len(out.Runs), out.Failed)
	}
}

// Progress: a start and an end event per step; the total falls when a driver stops early, and
// the remaining time estimate counts the steps left.
func TestProgress(t *testing.T) {
	m := model{
		tput: func(_ string, l float64) float64 { return 1000 * l },
		lat: func(d string, l float64) time.Duration {
			if d == "b" {
				return time.Second
			}
			return time.Millisecond
		},
	}
	var calls []Step
	var events []Event
	_, err := Run(context.Background(), Options{
		Mode: results.SweepConcurrency, Loads: []float64{1, 2, 3}, Drivers: []string{"a", "b"}, SLO: mustSLO(t, "p99=5ms"),
		Step: m.step(t, &calls), Progress: func(e Event) { events = append(events, e) }, StepTime: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Per run a start and an end; per step, once its rounds are in, its decision.
	var starts, decided []Event
	for _, e := range events {
		switch {
		case !e.Done:
			starts = append(starts, e)
		case e.Decided:
			decided = append(decided, e)
		}
	}
	if len(calls) != 4 || len(starts) != 4 || len(decided) != 4 || len(events) != 12 {
		t.Fatalf("%d events (%d starts, %d decisions) for %d runs", len(events), len(starts), len(decided), len(calls))
	}
	first := starts[0]
	if first.Step.Seq != 1 || first.Step.Total != 6 || first.Remaining != 6*time.Hour {
		t.Errorf("first event %+v; want step 1 of 6, 6 h left by the guess", first)
	}
	if e := decided[1]; e.Step.Driver != "b" || e.Result.Verdict != results.VerdictOver || !strings.Contains(e.StopReason, "more than 4 ×") {
		t.Errorf("b's first step's decision %+v; want the stop", e)
	}
	if e := starts[2]; e.Step.Seq != 3 || e.Step.Total != 4 || e.Remaining >= time.Hour {
		t.Errorf("after b stopped: %+v; want step 3 of 4, the measured (short) step time", e)
	}
}

func TestOptionsChecked(t *testing.T) {
	step := func(context.Context, Step) (results.Run, error) { return results.Run{}, nil }
	slo := mustSLO(t, "p99=5ms")
	for _, c := range []struct {
		o   Options
		msg string
	}{
		{Options{Mode: "x", Loads: []float64{1}, Drivers: []string{"a"}, SLO: slo, Step: step}, `mode "x"`},
		{Options{Mode: results.SweepRate, Loads: []float64{2, 1}, Drivers: []string{"a"}, SLO: slo, Step: step}, "ascending"},
		{Options{Mode: results.SweepRate, Loads: []float64{1}, SLO: slo, Step: step}, "no drivers"},
		{Options{Mode: results.SweepRate, Loads: []float64{1}, Drivers: []string{"a"}, SLO: slo}, "no step function"},
		{Options{Mode: results.SweepRate, Loads: []float64{1}, Drivers: []string{"a"}, Step: step}, "SLO"},
		{Options{Mode: results.SweepRate, Loads: []float64{1}, Drivers: []string{"a"}, SLO: slo, Step: step, SaturationMargin: 1}, "--saturation-margin 1"},
		{Options{Mode: results.SweepRate, Loads: []float64{1}, Drivers: []string{"a"}, SLO: slo, Step: step, StopFactor: 0.5}, "--stop-factor 0.5"},
	} {
		if _, err := Run(context.Background(), c.o); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: %v; want ErrBadInput with %q", c.o, err, c.msg)
		}
	}
}

// The summary for people, against a golden file (go test -update rewrites it).
func TestWriteSummaryGolden(t *testing.T) {
	iv := func(lo, hi float64) *results.SweepInterval {
		return &results.SweepInterval{LowUS: lo, HighUS: hi, Coverage: 0.75}
	}
	s := &results.Sweep{
		Mode: results.SweepRate, Loads: []float64{2000, 3860, 7460, 14400},
		SLO:              results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 2000},
		SaturationMargin: 0.05, StopFactor: 4,
		Rounds: 3, MaxRounds: 6, Confidence: 0.75, IntervalMethod: IntervalMethod, Precision: 0.05, BudgetS: 600,
		RoundTrip: &results.SweepRoundTrip{Count: 5000, DurationS: 0.61, LatencyUS: 175, P50US: 98, P99US: 175, P999US: 590, MaxUS: 2100},
		PacedRoundTrips: []results.SweepRoundTrip{
			{RatePerS: 100, Count: 1000, DurationS: 10, LatencyUS: 380, P50US: 120, P99US: 380, P999US: 910, MaxUS: 1200},
			{RatePerS: 2000, Count: 2000, DurationS: 1, LatencyUS: 240, P50US: 101, P99US: 240, P999US: 700, MaxUS: 900},
			{RatePerS: 3860, Error: "no paced round trip at 3860/s: i/o timeout"},
		},
		NoiseFloor: []results.SweepFloor{
			{Driver: "lockcore", Load: 100, Run: 0, LatencyUS: 420},
			{Driver: "naive", Load: 100, Run: 1, LatencyUS: 1150, Warning: "the noise floor (p99 1.15ms at 100/s) is at least 1/2 of the SLO's 2.00ms: the machine itself adds that much before Redis does any work, and the knee will not be stable; loosen the SLO or quiet the machine"},
		},
		Drivers: []results.SweepDriver{
			{Driver: "lockcore", KneeStep: 6, KneeLoad: 10200, StoppedEarly: true, StopReason: "step 4: achieved 9000 acq/s, 38% below the target 14400/s",
				Knee: &results.KneeBracket{OKStep: 6, OKLoad: 10200, OverStep: 5, OverLoad: 10400, OverVerdict: results.VerdictUncertain, Width: 10400.0/10200 - 1,
					Refined: RefinedPrecise, ProjectedServerCapacityPerS: 61234},
				Steps: []results.SweepStep{
					{Step: 1, Load: 2000, Run: 2, Runs: []int{2, 4, 6}, Interval: iv(290, 330), ThroughputPerS: 1999.2, LatencyUS: 310, Verdict: results.VerdictOK},
					{Step: 2, Load: 3860, Run: 8, Runs: []int{8, 10, 12}, Interval: iv(420, 480), ThroughputPerS: 3858, LatencyUS: 450, Verdict: results.VerdictOK},
					{Step: 3, Load: 7460, Run: 14, Runs: []int{14, 16, 18}, Interval: iv(1150, 1290), ThroughputPerS: 7455, LatencyUS: 1210, Verdict: results.VerdictOK},
					{Step: 4, Load: 14400, Run: 20, Runs: []int{20}, ThroughputPerS: 9000, LatencyUS: 95000, Verdict: results.VerdictSaturated, Reason: "achieved 9000 acq/s, 38% below the target 14400/s"},
					{Step: 5, Load: 10400, Refined: true, Run: 21, Runs: []int{21, 22, 23, 24, 25, 26}, Interval: iv(1800, 2300), ThroughputPerS: 10400, LatencyUS: 2050, Verdict: results.VerdictUncertain, Reason: "p99 1.80ms–2.30ms across 6 rounds straddles the SLO's 2.00ms"},
					{Step: 6, Load: 10200, Refined: true, Run: 27, Runs: []int{27, 28, 29}, Interval: iv(1700, 1950), ThroughputPerS: 10200, LatencyUS: 1850, Verdict: results.VerdictOK},
					{Step: 7, Load: 10600, Refined: true, Run: 30, Runs: []int{30, 31, 32}, Interval: iv(2100, 2600), ThroughputPerS: 10600, LatencyUS: 2300, Verdict: results.VerdictOver},
				}},
			{Driver: "naive", StoppedEarly: true, StopReason: "step 1: p99 9.10ms is more than 4 × the SLO's 2.00ms",
				Knee: &results.KneeBracket{OverStep: 1, OverLoad: 2000, OverVerdict: results.VerdictOver, Refined: RefinedNothing},
				Steps: []results.SweepStep{
					{Step: 1, Load: 2000, Run: 3, Runs: []int{3, 5, 7}, Interval: iv(8800, 9500), ThroughputPerS: 1990, LatencyUS: 9100, Verdict: results.VerdictOver},
				}},
		},
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, s); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "summary.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if buf.String() != string(want) {
		t.Errorf("summary differs from %s (go test -update rewrites it):\n%s", golden, buf.String())
	}
}

// TestStoppedEarlyStep: a step stopped past the SLO (Run.Aborted) is over, not incomplete, it
// counts the measuring it saved, and the summary adds it up.
func TestStoppedEarlyStep(t *testing.T) {
	o := &Options{Mode: results.SweepConcurrency, SLO: SLO{Name: "p99", Percentile: 99, Limit: 2 * time.Millisecond}, StopFactor: 4, Duration: 3 * time.Second}
	run := fakeRun(t, "lockcore", 1000, 5*time.Millisecond) // p99 5ms: over, below 4 × 2ms
	run.Complete, run.Aborted, run.DurationS = false, "p99 5.00ms over the SLO's 2.00ms after 1.0s", 1
	lat, err := LatencyUS(&run, 99)
	if err != nil {
		t.Fatal(err)
	}
	st, stop := o.judge(8, &run, lat, 0, "")
	if st.Verdict != results.VerdictOver || stop != "" || st.SavedS != 2 || !strings.Contains(st.Reason, "stopped early") {
		t.Fatalf("aborted step: %+v, stop %q; want over, 2s saved, going on", st, stop)
	}
	st.Step = 1
	sw := &results.Sweep{Mode: results.SweepConcurrency, Loads: []float64{8}, SLO: results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 2000}, StopFactor: 4,
		Drivers: []results.SweepDriver{{Driver: "lockcore", Steps: []results.SweepStep{st}}}}
	var buf strings.Builder
	if err := WriteSummary(&buf, sw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "1 step stopped early, already past the SLO: 2.0s of measuring saved") {
		t.Errorf("summary lacks the time saved:\n%s", buf.String())
	}
}

func TestOutcomeComplete(t *testing.T) {
	t.Parallel()
	done, cut := results.Run{Complete: true}, results.Run{}
	for _, tc := range []struct {
		name string
		o    Outcome
		want bool
	}{
		{"nothing ran", Outcome{}, true},
		{"every run complete", Outcome{Runs: []results.Run{done, done}}, true},
		{"a run cut short", Outcome{Runs: []results.Run{done, cut}}, false},
		{"a step failed", Outcome{Runs: []results.Run{done}, Failed: true}, false},
	} {
		if got := tc.o.Complete(); got != tc.want {
			t.Errorf("%s: Complete() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
