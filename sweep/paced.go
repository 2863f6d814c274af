package sweep

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/pacing"
	"github.com/lockbench/lockbench/results"
)

// The paced round trip (issue 44): the raw round trip's requests, one at a time on the same
// connection, but each at its slot of a uniform schedule at a sweep's rate and waited for as
// the open loop's workers wait (pacing.Waiter: the timerfd, then the spin within a budget).
// Between two requests the client's CPU and the server's idle as they do in a run at that
// rate, so the wake-ups from idle that a run pays, the probe pays too; back to back, neither
// CPU ever idles. The time is from the request's send (after the wait) to its answer, so the
// pacer's own lateness, which a run reports as its start lag, is not in it; FromSlot times the
// same requests from their slots, as a run times its acquisitions, lateness included, so that a
// run's tail compares with it like for like (on this project's VMs a paced request is now and
// then late by milliseconds, before its send or after it, with no lockbench involved:
// docs/findings.md).

// Defaults of the paced round trips: at most DefaultPacedRoundTrips requests a rate or
// DefaultPacedRoundTripTime (or one run's measured phase, if shorter), whichever ends first
// (2000 take 8 s at 250/s; at 12.5/s the time bound leaves 125).
const (
	DefaultPacedRoundTrips    = 2000
	DefaultPacedRoundTripTime = 10 * time.Second
)

// PacedIdleGap: a rate is paced only when its slots are at least this many back-to-back round
// trips (p50) apart. Closer, the client and the server barely idle between requests, and the
// paced probe is the back-to-back one with a pacer in front.
const PacedIdleGap = 4

// MaxPacedRates bounds how many rates are paced: the lowest, where idling costs most.
const MaxPacedRates = 4

// pacedRates are the rates a sweep times paced round trips at, ascending: the noise floor's and
// the grid's, those whose slots are PacedIdleGap × p50US apart at least and that give
// minRoundTrips within d, at most MaxPacedRates.
func pacedRates(o *Options, p50US float64, d time.Duration) []float64 {
	all := append([]float64{floorLoad(o)}, o.Loads...)
	slices.Sort(all)
	all = slices.Compact(all)
	var rates []float64
	for _, r := range all {
		if len(rates) == MaxPacedRates || 1e6/r < PacedIdleGap*p50US {
			break
		}
		if r*d.Seconds() >= minRoundTrips {
			rates = append(rates, r)
		}
	}
	return rates
}

// MeasurePacedRoundTrip calls ping once per slot of a uniform schedule at rate per second,
// waiting for each slot as the open loop's workers do, up to n times, for at most d or until
// ctx ends, and returns the round trips' percentiles as MeasureRoundTrip does, with RatePerS
// set. It is safe for concurrent use; the calls of one measurement are sequential.
func MeasurePacedRoundTrip(ctx context.Context, ping func(context.Context) error, rate float64, n int, d time.Duration, percentile float64) results.SweepRoundTrip {
	what := fmt.Sprintf("no paced round trip at %s/s", fmtLoad(rate))
	sched, err := pacing.New(rate, pacing.Uniform, 0)
	if err != nil {
		return results.SweepRoundTrip{RatePerS: rate, Error: what + ": " + err.Error()}
	}
	w := pacing.NewWaiter(pacing.NewSpinBudget(pacing.DefaultSpinShare, pacing.DefaultSpinWindow))
	defer w.Close()
	var start time.Time
	wait := func(ctx context.Context, deadline time.Time) (time.Time, bool) {
		if start.IsZero() {
			start = time.Now().Add(time.Millisecond) // the first slot, as a phase's, a little ahead
		}
		at := start.Add(sched.Next())
		if !at.Before(deadline) {
			return at, false
		}
		_, ok := w.Wait(ctx, at)
		return at, ok
	}
	rt := measureRoundTrip(ctx, ping, n, d, percentile, what, wait)
	rt.RatePerS = rate
	return rt
}
