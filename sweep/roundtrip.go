package sweep

import (
	"context"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/results"
)

// The raw round trip: before the noise floor, a rate sweep times requests to the server sent
// one at a time from lockbench itself (Options.Ping, a PING), back to back as
// redis-benchmark -c 1 does. It is what the network and the server take for one request with
// no lock, no pacing and no workers: the floor under the noise floor. Printed beside the noise
// floor, the two say how much of the floor is the machine's and the server's and how much is
// lockbench's own (waking the pacer, handing the attempt to a worker, batching, the reply's
// wake-up).
//
// Back to back, neither the client's CPU nor the server's ever idles. A run at a light rate
// lets both idle between arrivals, and waking an idle CPU (a virtual one above all) costs
// time that is the machine's, not lockbench's. So the same requests are also timed paced
// (paced.go): one per slot of the open loop's own schedule and wait.

// Defaults of the round-trip check: at most DefaultRoundTrips requests or DefaultRoundTripTime,
// whichever ends first. 5000 give a p99.9 of 5 samples; on loopback they take about half a
// second, and the time bound keeps a slow link (a remote deployment at 1 ms) to a few seconds.
const (
	DefaultRoundTrips    = 5000
	DefaultRoundTripTime = 3 * time.Second
)

// minRoundTrips is the fewest requests whose p99 is worth printing: with fewer, the p99 is
// the largest of a handful.
const minRoundTrips = 100

// roundTrip measures the raw round trip with o.Ping, when the sweep has a noise floor and a
// ping function, and records it in the sweep; then, when it has figures, the paced round trips
// (see pacedRates). A ping that fails is recorded as the reason there is no round trip: the
// steps will say what is wrong with the server.
func (sw *sweeper) roundTrip(ctx context.Context) {
	o := sw.o
	if o.Ping == nil || !probes(o) {
		return
	}
	b := probeBoundsOf(o)
	rt := MeasureRoundTrip(ctx, o.Ping, b.n, b.d, o.SLO.Percentile)
	sw.out.Sweep.RoundTrip = &rt
	if rt.Error != "" || b.pacedN < 0 {
		return
	}
	for _, rate := range pacedRates(o, rt.P50US, b.pacedD) {
		if ctx.Err() != nil {
			return
		}
		sw.out.Sweep.PacedRoundTrips = append(sw.out.Sweep.PacedRoundTrips, MeasurePacedRoundTrip(ctx, o.Ping, rate, b.pacedN, b.pacedD, o.SLO.Percentile))
	}
}

// probes reports whether a sweep of o times the raw round trip (given a ping function): a rate
// sweep with a noise floor.
func probes(o *Options) bool { return o.FloorShare > 0 && o.Mode == results.SweepRate }

// probeBounds are the round-trip probes' bounds, o's or the defaults: n requests within d back
// to back, pacedN (below 0: no paced probe) within pacedD per paced rate.
type probeBounds struct {
	n, pacedN int
	d, pacedD time.Duration
}

func probeBoundsOf(o *Options) probeBounds {
	b := probeBounds{n: o.RoundTrips, d: o.RoundTripTime, pacedN: o.PacedRoundTrips, pacedD: o.PacedRoundTripTime}
	if b.n <= 0 {
		b.n = DefaultRoundTrips
	}
	if b.d <= 0 {
		b.d = DefaultRoundTripTime
	}
	if b.pacedN == 0 {
		b.pacedN = DefaultPacedRoundTrips
	}
	if b.pacedD <= 0 {
		// No longer than a run: a sweep of short runs is a quick look, not a measurement.
		b.pacedD = DefaultPacedRoundTripTime
		if o.Duration > 0 {
			b.pacedD = min(b.pacedD, o.Duration)
		}
	}
	return b
}

// probeTime is the most the round-trip probes of a sweep of o may take, and the rates it may
// pace them at: the back-to-back probe's bound, and each paced rate's (its requests at its
// rate, or its time bound if shorter) for every rate pacedRates could pick, as if the round
// trip were instant (the measured one leaves out the rates too fast to idle between).
func probeTime(o *Options) (time.Duration, []float64) {
	if !probes(o) || len(o.Loads) == 0 {
		return 0, nil
	}
	b := probeBoundsOf(o)
	total := b.d
	if b.pacedN < 0 {
		return total, nil
	}
	rates := pacedRates(o, 0, b.pacedD)
	for _, r := range rates {
		total += min(time.Duration(float64(b.pacedN)/r*float64(time.Second)), b.pacedD)
	}
	return total, rates
}

// MeasureRoundTrip calls ping up to n times, one at a time, for at most d or until ctx ends,
// and returns the round trips' percentiles (the SLO's percentile too, in LatencyUS). ping's
// context carries the deadline d. A failed ping, or fewer than 100 answered, leaves an Error
// saying so. It is safe for concurrent use; the calls of one measurement are sequential.
func MeasureRoundTrip(ctx context.Context, ping func(context.Context) error, n int, d time.Duration, percentile float64) results.SweepRoundTrip {
	return measureRoundTrip(ctx, ping, n, d, percentile, "no raw round trip", nil)
}

// measureRoundTrip is MeasureRoundTrip with a wait before each ping (nil: none), which
// returns the request's slot, and false when ctx ended or the time bound would pass first; its
// context carries the deadline d and the interrupt. With a wait, FromSlot times each request
// from its slot as well. An Error starts with what.
func measureRoundTrip(ctx context.Context, ping func(context.Context) error, n int, d time.Duration, percentile float64, what string, wait func(context.Context, time.Time) (time.Time, bool)) results.SweepRoundTrip {
	// A deadline rather than a cancel: rueidis sends a call whose context has a deadline and
	// no other cancel on the caller's goroutine (a write and a read), with none of its
	// pipeline's hand-offs; the interrupt is checked between calls.
	deadline := time.Now().Add(d)
	pctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	wctx, wcancel := context.WithDeadline(ctx, deadline)
	defer wcancel()
	h := hdrhistogram.New(results.MinLatencyUS, results.MaxLatencyUS, results.SigFigs)
	var fromSlot *hdrhistogram.Histogram // paced: from each request's slot
	if wait != nil {
		fromSlot = hdrhistogram.New(results.MinLatencyUS, results.MaxLatencyUS, results.SigFigs)
	}
	began := time.Now()
	var err error
	for i := 0; i < n && ctx.Err() == nil && pctx.Err() == nil; i++ {
		var slot time.Time
		if wait != nil {
			var ok bool
			if slot, ok = wait(wctx, deadline); !ok {
				break
			}
		}
		start := time.Now()
		if err = ping(pctx); err != nil {
			break
		}
		_ = h.RecordValue(max(time.Since(start).Microseconds(), results.MinLatencyUS)) // clamped to the range
		if fromSlot != nil {
			_ = fromSlot.RecordValue(max(time.Since(slot).Microseconds(), results.MinLatencyUS))
		}
	}
	rt := results.SweepRoundTrip{Count: h.TotalCount(), DurationS: time.Since(began).Seconds()}
	switch {
	case err != nil && pctx.Err() == nil && time.Now().Before(deadline):
		// A ping cut by the time bound is no failure. rueidis gives the connection the
		// deadline, whose timeout may come back before the context's own timer has fired:
		// the clock decides.
		rt.Error = what + ": " + err.Error()
		return rt
	case rt.Count < minRoundTrips:
		rt.Error = fmt.Sprintf("%s: %d requests answered within %v, want %d at least", what, rt.Count, d, minRoundTrips)
		return rt
	}
	at := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) }
	rt.P50US, rt.P99US, rt.P999US, rt.MaxUS = at(50), at(99), at(99.9), float64(h.Max())
	rt.LatencyUS = at(percentile)
	if fromSlot != nil {
		q := func(p float64) float64 { return float64(fromSlot.ValueAtQuantile(p)) }
		rt.FromSlot = &results.SweepFromSlot{P50US: q(50), P99US: q(99), P999US: q(99.9), MaxUS: float64(fromSlot.Max())}
	}
	return rt
}
