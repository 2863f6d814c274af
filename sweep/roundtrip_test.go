package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/results"
)

// A Pinger against a real redis-server: the count bounds the requests, the percentiles are in
// order and within what the loop took, and a server that is gone is an error, not a figure.
func TestMeasureRoundTripRealServer(t *testing.T) {
	srv := redistest.NewServer(t)
	p, err := NewPinger(srv.Addrs()[0], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const n = 300
	rt := MeasureRoundTrip(t.Context(), p.Ping, n, time.Minute, 99)
	if rt.Error != "" || rt.Count != n {
		t.Fatalf("%+v; want %d round trips and no error", rt, n)
	}
	if !(rt.P50US >= results.MinLatencyUS && rt.P50US <= rt.P99US && rt.P99US <= rt.P999US && rt.P999US <= rt.MaxUS) {
		t.Errorf("percentiles out of order: %+v", rt)
	}
	if rt.LatencyUS != rt.P99US {
		t.Errorf("the SLO's p99 %v is not the p99 %v", rt.LatencyUS, rt.P99US)
	}
	// n requests one at a time take at least n × the median's lower half: the loop ran them.
	if total := rt.DurationS * 1e6; total < float64(n)/2*rt.P50US*0.99 {
		t.Errorf("%d round trips with p50 %vµs took only %vµs", n, rt.P50US, total)
	}

	srv.Close()
	gone := MeasureRoundTrip(t.Context(), p.Ping, n, time.Minute, 99)
	if gone.Error == "" || gone.P99US != 0 {
		t.Errorf("a stopped server gave %+v; want an error and no figures", gone)
	}
}

// The time bound ends the loop well before the count, and too few answers are no figure.
func TestMeasureRoundTripBounds(t *testing.T) {
	slow := func(ctx context.Context) error {
		select {
		case <-time.After(2 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	began := time.Now()
	rt := MeasureRoundTrip(t.Context(), slow, 1_000_000, 100*time.Millisecond, 99)
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("a bound of 100ms took %v", took)
	}
	if rt.Count >= minRoundTrips || !strings.Contains(rt.Error, "want 100 at least") || rt.P99US != 0 {
		t.Errorf("%+v; want fewer than %d answers, and so an error and no figures", rt, minRoundTrips)
	}

	// A ping that runs into the bound fails as the connection's deadline passes, which may be
	// before the context's timer has fired: still no failure.
	cut := func(ctx context.Context) error {
		if dl, _ := ctx.Deadline(); time.Until(dl) < time.Millisecond {
			for time.Now().Before(dl) {
			}
			return errors.New("i/o timeout")
		}
		return nil
	}
	if rt := MeasureRoundTrip(t.Context(), cut, 1_000_000, 50*time.Millisecond, 99); rt.Error != "" || rt.Count < minRoundTrips {
		t.Errorf("a ping cut by the time bound gave %+v; want the round trips before it", rt)
	}

	failing := func(context.Context) error { return errors.New("NOAUTH Authentication required") }
	if rt := MeasureRoundTrip(t.Context(), failing, 10, time.Second, 99); !strings.Contains(rt.Error, "NOAUTH") || rt.Count != 0 {
		t.Errorf("a refused ping gave %+v", rt)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := 0
	counting := func(context.Context) error { calls++; return nil }
	if MeasureRoundTrip(ctx, counting, 10, time.Second, 99); calls != 0 {
		t.Errorf("an interrupted sweep pinged %d times", calls)
	}
}

// A rate sweep with a noise floor measures the round trip before anything else and records
// it; the summary prints it beside the floor, with each floor as a multiple of it. A
// concurrency sweep, or one without a floor, has none.
func TestSweepRecordsRoundTrip(t *testing.T) {
	var order []string
	ping := func(context.Context) error {
		if len(order) == 0 || order[len(order)-1] != "ping" {
			order = append(order, "ping")
		}
		// A busy 50µs: a sleep that short may take a millisecond (Go's timers wake an idle
		// process in whole milliseconds), and the floor's 4ms slots would then be too close
		// to pace.
		for began := time.Now(); time.Since(began) < 50*time.Microsecond; {
		}
		return nil
	}
	step := func(_ context.Context, s Step) (results.Run, error) {
		if len(order) == 0 || order[len(order)-1] != "step" {
			order = append(order, "step")
		}
		r := fakeRun(t, s.Driver, 1000, 400*time.Microsecond)
		r.Pacing, r.TargetRate, r.AchievedRate = results.PacingOpen, s.Load, s.Load
		return r, nil
	}
	rate := Options{
		Mode: results.SweepRate, Loads: []float64{5000}, Drivers: []string{"a"},
		SLO: mustSLO(t, "p99=2ms"), FloorShare: DefaultFloorShare, Step: step,
		Ping: ping, RoundTrips: 200, RoundTripTime: 10 * time.Second,
		PacedRoundTrips: 120, PacedRoundTripTime: 10 * time.Second,
	}
	out, err := Run(t.Context(), rate)
	if err != nil {
		t.Fatal(err)
	}
	rt := out.Sweep.RoundTrip
	if rt == nil || rt.Count != 200 || rt.Error != "" || rt.P99US < 50 {
		t.Fatalf("round trip %+v; want 200 pings of 50µs at least", rt)
	}
	if len(order) != 2 || order[0] != "ping" || order[1] != "step" {
		t.Errorf("order %v; want the pings, then the runs", order)
	}
	// Paced at the noise floor's 250/s (4ms apart, far more than 4 pings); 5000/s is 200µs
	// apart, about 4 pings of 50µs: not paced, or paced after it.
	paced := out.Sweep.PacedRoundTrips
	if len(paced) == 0 || paced[0].RatePerS != 250 || paced[0].Count != 120 || paced[0].Error != "" || paced[0].P99US < 50 {
		t.Fatalf("paced round trips %+v; want 120 pings at 250/s first", paced)
	}
	// 120 slots 4ms apart: the last one is 476ms after the first.
	if paced[0].DurationS < 0.476 {
		t.Errorf("120 pings paced at 250/s took %vs; want 0.476s at least", paced[0].DurationS)
	}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, &out.Sweep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"raw round trip, back to back (200 PINGs one at a time", "raw round trip, paced at 250/s (120 PINGs in ",
		"noise floor at 250/s: a p99 ", "× the round trip back to back, ", "× paced)", "p99/rt  p99/paced  verdict"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
	}

	// PacedRoundTrips below 0: back to back only.
	none := rate
	none.PacedRoundTrips = -1
	if out, err := Run(t.Context(), none); err != nil || out.Sweep.RoundTrip == nil || len(out.Sweep.PacedRoundTrips) != 0 {
		t.Errorf("PacedRoundTrips -1 gave %+v, %v; want the round trip and no paced one", out.Sweep.PacedRoundTrips, err)
	}

	for name, o := range map[string]Options{
		"no floor":    {Mode: results.SweepRate, Loads: []float64{5000}, Drivers: []string{"a"}, SLO: mustSLO(t, "p99=2ms"), Step: step, Ping: ping},
		"concurrency": {Mode: results.SweepConcurrency, Loads: []float64{1}, Drivers: []string{"a"}, SLO: mustSLO(t, "p99=2ms"), FloorShare: DefaultFloorShare, Step: step, Ping: ping},
	} {
		order = nil
		out, err := Run(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		if out.Sweep.RoundTrip != nil || len(order) == 0 || order[0] == "ping" {
			t.Errorf("%s: round trip %+v, calls %v; want none", name, out.Sweep.RoundTrip, order)
		}
	}
}

// A Pinger paced at 1000/s: every ping is answered, the slots are kept (n pings take n-1 gaps at
// least), and the record says the rate.
func TestMeasurePacedRoundTripRealServer(t *testing.T) {
	srv := redistest.NewServer(t)
	p, err := NewPinger(srv.Addrs()[0], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const n = 200
	rt := MeasurePacedRoundTrip(t.Context(), p.Ping, 1000, n, time.Minute, 99)
	if rt.Error != "" || rt.Count != n || rt.RatePerS != 1000 {
		t.Fatalf("%+v; want %d round trips at 1000/s and no error", rt, n)
	}
	if !(rt.P50US >= results.MinLatencyUS && rt.P50US <= rt.P99US && rt.P99US <= rt.P999US && rt.P999US <= rt.MaxUS) {
		t.Errorf("percentiles out of order: %+v", rt)
	}
	if rt.DurationS < float64(n-1)/1000 {
		t.Errorf("%d pings at 1000/s took %vs; want %vs at least", n, rt.DurationS, float64(n-1)/1000)
	}
	// From its slot a request takes at least what it takes from its send, request by request,
	// so every percentile is at least the same percentile from the send.
	f := rt.FromSlot
	if f == nil || f.P50US < rt.P50US || f.P99US < rt.P99US || f.P999US < rt.P999US || f.MaxUS < rt.MaxUS {
		t.Errorf("from the slot %+v; want each percentile at least the one from the send (%+v)", f, rt)
	}
	if b2b := MeasureRoundTrip(t.Context(), p.Ping, minRoundTrips, time.Minute, 99); b2b.Error != "" || b2b.FromSlot != nil {
		t.Errorf("back to back: %+v; want figures and no from-slot ones (no slots)", b2b)
	}
}

// A request that takes longer than the gap between slots makes every later one start behind
// its slot: from the send each takes its 3ms, from the slot they fall further and further
// behind, and FromSlot says so where the send's figures cannot.
func TestMeasurePacedRoundTripFromSlot(t *testing.T) {
	slow := func(context.Context) error { time.Sleep(3 * time.Millisecond); return nil }
	const n = minRoundTrips + 20 // request i starts about 3i ms in, its slot is at i ms: the last ~240ms late
	rt := MeasurePacedRoundTrip(t.Context(), slow, 1000, n, time.Minute, 99)
	if rt.Error != "" || rt.Count != n || rt.FromSlot == nil {
		t.Fatalf("%+v; want %d answers with from-slot figures", rt, n)
	}
	if rt.MaxUS >= 20_000 || rt.FromSlot.MaxUS < 200_000 {
		t.Errorf("from the send max %vµs, from the slot max %vµs; want under 20ms and 200ms at least", rt.MaxUS, rt.FromSlot.MaxUS)
	}
}

// The paced probe's bounds: the time bound ends it before a slot past it, an interrupt ends it
// at once, and a rate the schedule refuses is an error, not a panic.
func TestMeasurePacedRoundTripBounds(t *testing.T) {
	calls := 0
	counting := func(context.Context) error { calls++; return nil }
	// 200/s within 603.5ms: the first slot 1ms after the start, then every 5ms: the 121st at
	// 601ms, the next past the bound (2.5ms either way for the start's own microseconds).
	rt := MeasurePacedRoundTrip(t.Context(), counting, 200, 1_000_000, 603500*time.Microsecond, 99)
	if rt.Error != "" || calls != 121 || rt.Count != 121 {
		t.Errorf("%+v after %d calls; want the 121 slots within the bound", rt, calls)
	}

	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	began := time.Now()
	rt = MeasurePacedRoundTrip(ctx, counting, 1, 1000, time.Minute, 99)
	if took := time.Since(began); took > 10*time.Second || rt.Count > 1 || rt.Error == "" {
		t.Errorf("an interrupt 50ms into slots 1s apart gave %+v after %v; want it ended at once, too few answers", rt, took)
	}

	if rt := MeasurePacedRoundTrip(t.Context(), counting, 0, 10, time.Second, 99); !strings.Contains(rt.Error, "no paced round trip at 0/s") {
		t.Errorf("rate 0 gave %+v", rt)
	}
}

// The rates paced: the noise floor's and the grid's, ascending, while their slots are at least
// PacedIdleGap round trips apart and give enough pings within the bound, at most
// MaxPacedRates.
func TestPacedRates(t *testing.T) {
	for _, c := range []struct {
		name  string
		loads []float64
		p50US float64
		d     time.Duration
		want  []float64
	}{
		{"the acceptance's", []float64{250, 1000}, 68, 10 * time.Second, []float64{12.5, 250, 1000}},
		{"the knee sweep's: only the floor idles", []float64{5000, 10000, 20000}, 68, 10 * time.Second, []float64{250}},
		{"a slow link idles less", []float64{250, 1000}, 300, 10 * time.Second, []float64{12.5, 250}},
		{"too few pings at the floor within the bound", []float64{250, 1000}, 68, 2 * time.Second, []float64{250, 1000}},
		{"at most MaxPacedRates", []float64{100, 200, 300, 400, 500}, 68, 10 * time.Second, []float64{100, 200, 300, 400}},
		{"nothing idles", []float64{100000}, 68, 10 * time.Second, nil},
	} {
		o := &Options{Mode: results.SweepRate, Loads: c.loads, FloorShare: DefaultFloorShare}
		if got := pacedRates(o, c.p50US, c.d); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v; want %v", c.name, got, c.want)
		}
	}
}

// BenchmarkRoundTrip is issue 44's idle experiment: the raw round trip back to back and paced
// at 250/s and 1000/s, on one connection (a Pinger) to a private redis-server, or to
// LOCKBENCH_REDIS=host:port (so that the server can be placed apart: taskset -c 1 redis-server,
// taskset -c 0 and GOMAXPROCS=1 for the benchmark, as --pin auto places them). b.N is the
// number of PINGs; it reports their p50, p99 and p99.9. Run it beside an idle-priority spinner
// on a CPU (chrt -i 0 taskset -c N sh -c 'while :; do :; done') to see what the CPU's idling
// between requests costs:
//
//	go test -run '^$' -bench RoundTrip -benchtime 2000x ./sweep
func BenchmarkRoundTrip(b *testing.B) {
	addr := os.Getenv("LOCKBENCH_REDIS")
	if addr == "" {
		addr = redistest.NewServer(b).Addrs()[0]
	}
	p, err := NewPinger(addr, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, rate := range []float64{0, 250, 1000} {
		name := "back-to-back"
		if rate > 0 {
			name = fmt.Sprintf("paced=%g", rate)
		}
		b.Run(name, func(b *testing.B) {
			MeasureRoundTrip(b.Context(), p.Ping, 200, time.Minute, 99) // the connection, warm
			b.ResetTimer()
			n := max(b.N, minRoundTrips) // the first call's b.N is 1
			var rt results.SweepRoundTrip
			if rate == 0 {
				rt = MeasureRoundTrip(b.Context(), p.Ping, n, time.Hour, 99)
			} else {
				rt = MeasurePacedRoundTrip(b.Context(), p.Ping, rate, n, time.Hour, 99)
			}
			b.StopTimer()
			if rt.Error != "" {
				b.Fatal(rt.Error)
			}
			b.ReportMetric(rt.P50US, "p50-us")
			b.ReportMetric(rt.P99US, "p99-us")
			b.ReportMetric(rt.P999US, "p999-us")
			b.ReportMetric(0, "ns/op") // a paced loop's length is the schedule's
		})
	}
}
