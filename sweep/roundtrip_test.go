package sweep

import (
	"bytes"
	"context"
	"errors"
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
		time.Sleep(50 * time.Microsecond)
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
	var buf bytes.Buffer
	if err := WriteSummary(&buf, &out.Sweep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"raw round trip (200 PINGs one at a time", "noise floor at 250/s: a p99 ", "× the round trip)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
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
