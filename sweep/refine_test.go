package sweep

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// curve is a simulated deployment whose p99 grows as the cube of the load and crosses the
// SLO's 2ms at knee acquisitions/s; every run achieves its rate. noise, if set, scales round
// r's latency (1-based), the same at every load.
type curve struct {
	knee  float64
	noise func(round int) float64
}

func (c curve) latency(load float64, round int) time.Duration {
	f := 1.0
	if c.noise != nil {
		f = c.noise(round)
	}
	return time.Duration(f * float64(2*time.Millisecond) * math.Pow(load/c.knee, 3))
}

func (c curve) step(t *testing.T, calls *[]Step) func(context.Context, Step) (results.Run, error) {
	return func(_ context.Context, s Step) (results.Run, error) {
		*calls = append(*calls, s)
		// 1000 acquisitions stand for the run; the achieved rate is the target's.
		r := fakeRun(t, s.Driver, 1000, c.latency(s.Load, s.Round))
		r.Pacing, r.TargetRate, r.AchievedRate = results.PacingOpen, s.Load, s.Load
		return r, nil
	}
}

// The sweep on a simulated curve: the grid doubles from 5000/s, the knee is at 37000/s,
// and bisection narrows "between 20000 and 40000" to within 5%, around the known knee, in at
// most RefineIterations steps, each reported like a grid step.
func TestBisectionFindsTheKnee(t *testing.T) {
	const knee = 37000.0
	c := curve{knee: knee}
	var calls []Step
	out, err := Run(context.Background(), Options{
		Mode: results.SweepRate, Loads: []float64{5000, 10000, 20000, 40000, 80000, 160000}, Drivers: []string{"a"},
		SLO: mustSLO(t, "p99=2ms"), Rounds: 3, Precision: 0.05, Step: c.step(t, &calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	a := driverRec(t, out, "a")
	b := a.Knee
	if b == nil {
		t.Fatalf("no bracket: %+v", a)
	}
	if !(b.OKLoad <= knee && knee < b.OverLoad) || b.Width > 0.05 || b.OverVerdict != results.VerdictOver || b.Refined != RefinedPrecise {
		t.Errorf("bracket %+v; want ok ≤ %v < over, within 5%%, refined to the precision", b, knee)
	}
	if a.KneeLoad != b.OKLoad {
		t.Errorf("knee %v, bracket's ok end %v", a.KneeLoad, b.OKLoad)
	}
	refined := 0
	for _, st := range a.Steps {
		lat := float64(c.latency(st.Load, 1)) / 1e3
		want := results.VerdictOK
		if lat > 2000 {
			want = results.VerdictOver
		}
		// 2ms × (80000/37000)^3 is over 4 × the SLO: the grid stops there.
		if st.Load > 40000 && !st.Refined {
			want = results.VerdictOver
		}
		if st.Verdict != want || len(st.Runs) != 3 || st.Interval == nil {
			t.Errorf("step %d (%v/s, refined %v): %s with %d rounds, interval %v; want %s on 3 rounds", st.Step, st.Load, st.Refined, st.Verdict, len(st.Runs), st.Interval, want)
		}
		if st.Refined {
			refined++
			if st.Step <= len(out.Sweep.Loads) || st.Load <= 20000 || st.Load >= 40000 {
				t.Errorf("refined step %+v: want numbered after the grid, between 20000 and 40000", st)
			}
		}
	}
	if most := RefineIterations(2, 0.05); refined == 0 || refined > most {
		t.Errorf("%d refined steps; want 1 to %d", refined, most)
	}
	// Rounds interleave nothing here (one driver), but each step's three rounds run in a row
	// and are numbered 1 to 3.
	for i, s := range calls {
		if s.Round != i%3+1 {
			t.Fatalf("call %d is round %d: %+v", i, s.Round, s)
		}
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, &out.Sweep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "≥ "+fmtLoad(b.OKLoad)+"/s (ok), < "+fmtLoad(b.OverLoad)+"/s (over)") {
		t.Errorf("the summary lacks the bracket:\n%s", buf.String())
	}
}

// Two drivers' rounds interleave: a1 b1 a2 b2 a3 b3 at each step.
func TestRoundsInterleaveDrivers(t *testing.T) {
	c := curve{knee: 1e9}
	var calls []Step
	_, err := Run(context.Background(), Options{
		Mode: results.SweepRate, Loads: []float64{1000}, Drivers: []string{"a", "b"},
		SLO: mustSLO(t, "p99=2ms"), Rounds: 3, Step: c.step(t, &calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range calls {
		got = append(got, s.Driver+string(rune('0'+s.Round)))
	}
	if strings.Join(got, " ") != "a1 b1 a2 b2 a3 b3" {
		t.Errorf("order %v", got)
	}
}

// A step whose rounds straddle the SLO is uncertain, gets more rounds up to the cap, and stays
// uncertain when they keep straddling it; the bracket's upper end says so.
func TestUncertainStraddling(t *testing.T) {
	// Rounds alternate 25% under and over a load whose p99 is the SLO exactly.
	c := curve{knee: 10000, noise: func(r int) float64 { return []float64{0.75, 1.25}[r%2] }}
	var calls []Step
	out, err := Run(context.Background(), Options{
		Mode: results.SweepRate, Loads: []float64{5000, 10000}, Drivers: []string{"a"},
		SLO: mustSLO(t, "p99=2ms"), Rounds: 3, MaxRounds: 6, Step: c.step(t, &calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	a := driverRec(t, out, "a")
	st := a.Steps[1]
	if st.Verdict != results.VerdictUncertain || len(st.Runs) != 6 || st.Interval == nil ||
		!(st.Interval.LowUS < 2000 && st.Interval.HighUS > 2000) || !strings.Contains(st.Reason, "straddles the SLO") {
		t.Fatalf("step 2: %+v; want uncertain after 6 rounds, its interval around 2ms", st)
	}
	if a.Steps[0].Verdict != results.VerdictOK || len(a.Steps[0].Runs) != 3 {
		t.Errorf("step 1: %+v; want ok on 3 rounds (1/8 of the SLO)", a.Steps[0])
	}
	if b := a.Knee; b.OKLoad != 5000 || b.OverLoad != 10000 || b.OverVerdict != results.VerdictUncertain {
		t.Errorf("bracket %+v; want ≥ 5000 ok, < 10000 uncertain", b)
	}
}

// More rounds can decide a step: three rounds whose p99 is 1.5, 2.5 and 1.6ms straddle a 2ms
// SLO, and at six (1.7, 1.8, 1.9ms more) the interval drops the extremes and sits under it.
// Each round's slow tail is its top 2% (the rest take 1ms), so the pooled p99 is under the SLO
// too: the two agree.
func TestMoreRoundsDecide(t *testing.T) {
	p99 := []time.Duration{1500, 2500, 1600, 1700, 1800, 1900}
	var calls []Step
	step := func(_ context.Context, s Step) (results.Run, error) {
		calls = append(calls, s)
		rec := results.NewRecorder()
		for i := range 1000 {
			l := time.Millisecond
			if i%50 == 0 || i%50 == 1 {
				l = p99[s.Round-1] * time.Microsecond
			}
			rec.Record(l, time.Microsecond, l)
		}
		r := results.Run{Driver: s.Driver, Complete: true, Pacing: results.PacingOpen, TargetRate: s.Load, AchievedRate: s.Load}
		if err := r.Fill(results.Merge(rec), time.Second); err != nil {
			t.Fatal(err)
		}
		return r, nil
	}
	out, err := Run(context.Background(), Options{
		Mode: results.SweepRate, Loads: []float64{10000}, Drivers: []string{"a"},
		SLO: mustSLO(t, "p99=2ms"), Rounds: 3, MaxRounds: 6, Step: step,
	})
	if err != nil {
		t.Fatal(err)
	}
	st := driverRec(t, out, "a").Steps[0]
	if st.Verdict != results.VerdictOK || len(calls) != 6 || st.Interval.HighUS >= 2000 || st.LatencyUS > 2000 || st.Interval.Coverage < DefaultConfidence {
		t.Errorf("%+v after %d rounds; want ok at 6, interval and pooled p99 under 2ms", st, len(calls))
	}
}

// One round's stall can make the pooled p99 disagree with the interval of the rounds: then the
// step is uncertain, and says why.
func TestPooledAndIntervalDisagree(t *testing.T) {
	// Six rounds of 1.5 to 1.9ms and one of 2.5ms, whose bulk fills the pooled tail.
	f := []float64{0.75, 1.25, 0.8, 0.85, 0.9, 0.95}
	c := curve{knee: 10000, noise: func(r int) float64 { return f[r-1] }}
	var calls []Step
	out, err := Run(context.Background(), Options{
		Mode: results.SweepRate, Loads: []float64{10000}, Drivers: []string{"a"},
		SLO: mustSLO(t, "p99=2ms"), Rounds: 3, MaxRounds: 6, Step: c.step(t, &calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	st := driverRec(t, out, "a").Steps[0]
	if st.Verdict != results.VerdictUncertain || st.LatencyUS <= 2000 || st.Interval.HighUS > 2000 || !strings.Contains(st.Reason, "fall on either side") {
		t.Errorf("%+v; want uncertain: pooled over, interval under", st)
	}
}

func TestInterval(t *testing.T) {
	for _, c := range []struct {
		values         []float64
		low, high, cov float64
	}{
		{[]float64{3, 1, 2}, 1, 3, 0.75},
		{[]float64{5, 1}, 1, 5, 0.5},
		{[]float64{6, 1, 5, 2, 4, 3}, 2, 5, 1 - 2*7.0/64},
		{[]float64{1, 2, 3, 4, 5}, 1, 5, 1 - 2.0/32},
	} {
		iv := Interval(c.values, DefaultConfidence)
		if iv == nil || iv.LowUS != c.low || iv.HighUS != c.high || math.Abs(iv.Coverage-c.cov) > 1e-12 {
			t.Errorf("Interval(%v) = %+v; want [%v, %v] covering %v", c.values, iv, c.low, c.high, c.cov)
		}
	}
	if iv := Interval([]float64{1}, DefaultConfidence); iv != nil {
		t.Errorf("one value: %+v; want none", iv)
	}
	// At 75%, 3 to 5 rounds give the range; 6 the 2nd to 5th: only 6 can narrow it.
	if canNarrow(3, 5, DefaultConfidence) || !canNarrow(3, 6, DefaultConfidence) || canNarrow(6, 7, DefaultConfidence) {
		t.Error("canNarrow: want rounds 4 and 5 never to narrow 3 rounds' range, 6 to")
	}
}

// With a cap of 5 rounds, more rounds could not narrow the range of 3: an uncertain step
// stays at 3.
func TestNoUselessRounds(t *testing.T) {
	c := curve{knee: 10000, noise: func(r int) float64 { return []float64{0.75, 1.25}[r%2] }}
	var calls []Step
	out, err := Run(context.Background(), Options{
		Mode: results.SweepRate, Loads: []float64{10000}, Drivers: []string{"a"},
		SLO: mustSLO(t, "p99=2ms"), Rounds: 3, MaxRounds: 5, Step: c.step(t, &calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := driverRec(t, out, "a").Steps[0]; st.Verdict != results.VerdictUncertain || len(calls) != 3 {
		t.Errorf("%+v after %d rounds; want uncertain after 3", st, len(calls))
	}
}

// The noise floor runs first, at 5% of the first rate, per driver; within 2 × of the SLO it
// warns, in the record and the summary.
func TestNoiseFloorWarning(t *testing.T) {
	floor := map[string]time.Duration{"quiet": 300 * time.Microsecond, "noisy": 1200 * time.Microsecond}
	var calls []Step
	step := func(_ context.Context, s Step) (results.Run, error) {
		calls = append(calls, s)
		lat := 100 * time.Microsecond
		if s.Floor {
			lat = floor[s.Driver]
		}
		r := fakeRun(t, s.Driver, 1000, lat)
		r.Pacing, r.TargetRate, r.AchievedRate = results.PacingOpen, s.Load, s.Load
		return r, nil
	}
	out, err := Run(context.Background(), Options{
		Mode: results.SweepRate, Loads: []float64{5000, 10000}, Drivers: []string{"quiet", "noisy"},
		SLO: mustSLO(t, "p99=2ms"), FloorShare: DefaultFloorShare, Step: step,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 2 || !calls[0].Floor || !calls[1].Floor || calls[0].Load != 250 || calls[2].Floor {
		t.Fatalf("calls %+v; want the two floors first, at 250/s", calls)
	}
	fl := out.Sweep.NoiseFloor
	if len(fl) != 2 || fl[0].Warning != "" || fl[0].LatencyUS != 300 || out.Runs[fl[0].Run].Driver != "quiet" {
		t.Errorf("quiet floor %+v", fl)
	}
	if len(fl) != 2 || !strings.Contains(fl[1].Warning, "is at least 1/2 of the SLO's 2.00ms") || fl[1].LatencyUS != 1200 {
		t.Errorf("noisy floor %+v; want the warning", fl)
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, &out.Sweep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "warning: noisy: the noise floor (p99 1.20ms at 250/s)") {
		t.Errorf("summary lacks the warning:\n%s", buf.String())
	}
}

// The budget bounds the refinement: on a fake clock where each run takes a minute, a budget
// of 2m30s lets two refined steps run and stops the third, which would end past it.
func TestBudgetBoundsRefinement(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := curve{knee: 37000}
	var calls []Step
	step := c.step(t, &calls)
	out, err := Run(context.Background(), Options{
		Mode: results.SweepRate, Loads: []float64{5000, 10000, 20000, 40000}, Drivers: []string{"a"},
		SLO: mustSLO(t, "p99=2ms"), Precision: 0.01, Budget: 150 * time.Second,
		Step: func(ctx context.Context, s Step) (results.Run, error) {
			now = now.Add(time.Minute)
			return step(ctx, s)
		},
		clock: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	a := driverRec(t, out, "a")
	refined := 0
	for _, st := range a.Steps {
		if st.Refined {
			refined++
		}
	}
	if refined != 2 || a.Knee.Refined != RefinedBudget || a.Knee.Width <= 0.01 {
		t.Errorf("%d refined steps, bracket %+v; want 2, stopped by the budget", refined, a.Knee)
	}
}

// The plan of the sweep: two drivers, six doubling rates, 3 rounds (6 at most), 5%
// precision, a noise floor, 5 s per run, a 10 minute budget.
func TestPlanTime(t *testing.T) {
	o := Options{Mode: results.SweepRate, Loads: []float64{5000, 10000, 20000, 40000, 80000, 160000}, Drivers: []string{"a", "b"},
		Rounds: 3, MaxRounds: 6, Precision: 0.05, FloorShare: 0.05, StepTime: 5 * time.Second, Budget: 10 * time.Minute}
	p := PlanTime(o)
	// Doubling to 5%: ln 2 / ln 1.05 = 14.2, 2^4 = 16 ≥ 14.2: four bisections.
	if p.FloorRuns != 2 || p.GridRuns != 36 || p.MaxGridRuns != 72 || p.RefineSteps != 4 || p.MaxRefineRuns != 48 {
		t.Errorf("plan %+v", p)
	}
	// The round trip: 3 s back to back, then paced at the floor's 250/s (2000 PINGs: 8 s, under
	// the 10 s bound) and the three lowest steps (0.4, 0.2, 0.1 s).
	probes := 3*time.Second + 8*time.Second + 700*time.Millisecond
	if p.Probes != probes || !slices.Equal(p.PacedRates, []float64{250, 5000, 10000, 20000}) {
		t.Errorf("probes %v at %v, want %v at 250, 5000, 10000, 20000/s", p.Probes, p.PacedRates, probes)
	}
	if p.Typical != probes+(2+36+24)*5*time.Second || p.Max != probes+(2+72+48)*5*time.Second {
		t.Errorf("typical %v, max %v", p.Typical, p.Max)
	}
	o.PacedRoundTrips = -1
	if p := PlanTime(o); p.Probes != 3*time.Second || p.PacedRates != nil {
		t.Errorf("with no paced probe: probes %v at %v, want 3s back to back", p.Probes, p.PacedRates)
	}
	o.PacedRoundTrips = 0
	o.Budget = time.Minute
	if p := PlanTime(o); p.Max != probes+(2+72)*5*time.Second+time.Minute+5*time.Second {
		t.Errorf("with a 1m budget: max %v", p.Max)
	}
}

// Closed loop: workers come whole, so the bisection ends at neighbouring counts, and says so.
func TestBisectionOfWorkers(t *testing.T) {
	// p99 = 2ms × (workers/11.5)^2: 11 workers are within 2ms, 12 are not.
	m := model{
		tput: func(_ string, l float64) float64 { return 1000 * l },
		lat: func(_ string, l float64) time.Duration {
			return time.Duration(float64(2*time.Millisecond) * math.Pow(l/11.5, 2))
		},
	}
	var calls []Step
	out, err := Run(context.Background(), Options{
		Mode: results.SweepConcurrency, Loads: []float64{1, 2, 4, 8, 16}, Drivers: []string{"a"},
		SLO: mustSLO(t, "p99=2ms"), Precision: 0.05, Step: m.step(t, &calls),
	})
	if err != nil {
		t.Fatal(err)
	}
	a := driverRec(t, out, "a")
	var refined []float64
	for _, st := range a.Steps {
		if st.Refined {
			refined = append(refined, st.Load)
		}
	}
	if b := a.Knee; b.OKLoad != 11 || b.OverLoad != 12 || b.Refined != RefinedAdjacent || fmt.Sprint(refined) != "[12 10 11]" {
		t.Errorf("bracket %+v after refined steps %v; want ≥ 11 ok, < 12 over, by 12, 10, 11", b, refined)
	}
}
