package workloads

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// HoldReporter is an Instance whose cycles check their holds in Redis (reentrancy, longhold).
// Implementations are safe for concurrent use.
type HoldReporter interface {
	// Holds returns what the checks have found so far, warm-up included.
	Holds() results.HoldChecks
}

// holdCounts is the hold checks of one run, shared by its workers. Safe for concurrent use.
type holdCounts struct {
	checks, mismatches, lost atomic.Int64
	unchecked                atomic.Pointer[string] // why a worker could not read its count
}

func (h *holdCounts) report() results.HoldChecks {
	r := results.HoldChecks{Checks: h.checks.Load(), CountMismatches: h.mismatches.Load(), LeasesLost: h.lost.Load()}
	if u := h.unchecked.Load(); u != nil {
		r.Unchecked = *u
	}
	return r
}

// violations is the safety events among the checks.
func (h *holdCounts) violations() int64 { return h.mismatches.Load() + h.lost.Load() }

// counter returns w as a HoldCounter, or nil after noting why its holds go unchecked.
func (h *holdCounts) counter(w drivers.Worker) drivers.HoldCounter {
	if hc, ok := w.(drivers.HoldCounter); ok {
		return hc
	}
	why := fmt.Sprintf("the driver's worker (%T) cannot read its hold count from Redis", w)
	h.unchecked.CompareAndSwap(nil, &why)
	return nil
}

// count reads hc's hold count of name and checks it against want; a read that fails is counted
// as an error of kind "hold_count" and not as a mismatch. It returns the count read, -1 on error.
func (h *holdCounts) count(ctx context.Context, hc drivers.HoldCounter, name string, want int64, rec *results.Recorder) int64 {
	n, err := hc.HoldCount(ctx, name)
	if err != nil {
		countError(rec, "hold_count", err)
		return -1
	}
	h.checks.Add(1)
	if n != want {
		h.mismatches.Add(1)
	}
	return n
}

// recordHolds sets run.Holds when inst checks holds, with the renewals the locker counted over
// the measured phase (renewals < 0: not counted). Its safety events are already in Violations.
func recordHolds(run *results.Run, inst Instance, renewals int64) {
	hr, ok := inst.(HoldReporter)
	if !ok {
		return
	}
	h := hr.Holds()
	if renewals >= 0 {
		h.Renewals, h.RenewalsCounted = renewals, true
		if run.Acquisitions > 0 {
			h.RenewalsPerAcquisition = float64(renewals) / float64(run.Acquisitions)
		}
	}
	run.Holds = &h
}

// renewalCount returns l's renewals so far, or -1 when it does not count them.
func renewalCount(l drivers.Locker) int64 {
	if rc, ok := l.(drivers.RenewalCounter); ok {
		return rc.Renewals()
	}
	return -1
}

// renewalsDelta is after - before, or -1 when the locker does not count renewals.
func renewalsDelta(before, after int64) int64 {
	if before < 0 || after < 0 {
		return -1
	}
	return after - before
}
