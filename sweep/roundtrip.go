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
// ping function, and records it in the sweep. A ping that fails is recorded as the reason
// there is no round trip: the steps will say what is wrong with the server.
func (sw *sweeper) roundTrip(ctx context.Context) {
	o := sw.o
	if o.Ping == nil || o.FloorShare <= 0 || o.Mode != results.SweepRate {
		return
	}
	n, d := o.RoundTrips, o.RoundTripTime
	if n <= 0 {
		n = DefaultRoundTrips
	}
	if d <= 0 {
		d = DefaultRoundTripTime
	}
	rt := MeasureRoundTrip(ctx, o.Ping, n, d, o.SLO.Percentile)
	sw.out.Sweep.RoundTrip = &rt
}

// MeasureRoundTrip calls ping up to n times, one at a time, for at most d or until ctx ends,
// and returns the round trips' percentiles (the SLO's percentile too, in LatencyUS). ping's
// context carries the deadline d. A failed ping, or fewer than 100 answered, leaves an Error
// saying so. It is safe for concurrent use; the calls of one measurement are sequential.
func MeasureRoundTrip(ctx context.Context, ping func(context.Context) error, n int, d time.Duration, percentile float64) results.SweepRoundTrip {
	// A deadline rather than a cancel: rueidis sends a call whose context has a deadline and
	// no other cancel on the caller's goroutine (a write and a read), with none of its
	// pipeline's hand-offs; the interrupt is checked between calls.
	deadline := time.Now().Add(d)
	pctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	h := hdrhistogram.New(results.MinLatencyUS, results.MaxLatencyUS, results.SigFigs)
	began := time.Now()
	var err error
	for i := 0; i < n && ctx.Err() == nil && pctx.Err() == nil; i++ {
		start := time.Now()
		if err = ping(pctx); err != nil {
			break
		}
		_ = h.RecordValue(max(time.Since(start).Microseconds(), results.MinLatencyUS)) // clamped to the range
	}
	rt := results.SweepRoundTrip{Count: h.TotalCount(), DurationS: time.Since(began).Seconds()}
	switch {
	case err != nil && pctx.Err() == nil && time.Now().Before(deadline):
		// A ping cut by the time bound is no failure. rueidis gives the connection the
		// deadline, whose timeout may come back before the context's own timer has fired:
		// the clock decides.
		rt.Error = "no raw round trip: " + err.Error()
		return rt
	case rt.Count < minRoundTrips:
		rt.Error = fmt.Sprintf("no raw round trip: %d requests answered within %v, want %d at least", rt.Count, d, minRoundTrips)
		return rt
	}
	at := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) }
	rt.P50US, rt.P99US, rt.P999US, rt.MaxUS = at(50), at(99), at(99.9), float64(h.Max())
	rt.LatencyUS = at(percentile)
	return rt
}
