package sweep

import (
	"time"

	"github.com/lockbench/lockbench/results"
)

// Plan is what a sweep will run and how long it may take, worked out before it starts (for
// lockbench sweep --dry-run and the first progress line). Times are runs × Options.StepTime.
// It is a plain value.
type Plan struct {
	// FloorRuns are the noise floor's runs; GridRuns the grid's if every step is decided in
	// Options.Rounds and no driver stops early; MaxGridRuns if every step needs
	// Options.MaxRounds.
	FloorRuns, GridRuns, MaxGridRuns int
	// RefineSteps is the most refined steps per driver (RefineIterations over the grid's
	// widest gap between neighbouring loads); MaxRefineRuns their runs at MaxRounds each, over
	// every driver.
	RefineSteps, MaxRefineRuns int
	// Probes is the most the round-trip probes may take (a rate sweep with a noise floor times
	// PINGs back to back, then paced at up to MaxPacedRates of its rates: PacedRates, as if the
	// round trip were instant; the measured one may leave the faster ones out).
	Probes     time.Duration
	PacedRates []float64
	// Typical is the time when every step is decided in Rounds and no driver stops early:
	// the floor, the grid and the most refined steps, the refinement bounded by
	// Options.Budget; Refine the refinement's most before the budget; Max the most in all: the
	// floor, the grid at MaxRounds, and the refinement bounded by the budget.
	// Both include Probes.
	Typical, Refine, Max time.Duration
}

// PlanTime works out o's plan. It expects o filled (as Run does); it is safe for concurrent
// use.
func PlanTime(o Options) Plan {
	var p Plan
	d := len(o.Drivers)
	rounds, maxRounds := max(o.Rounds, 1), max(o.MaxRounds, o.Rounds, 1)
	if o.FloorShare > 0 && o.Mode == results.SweepRate {
		p.FloorRuns = d
	}
	p.GridRuns = d * len(o.Loads) * rounds
	p.MaxGridRuns = d * len(o.Loads) * maxRounds
	if o.Precision > 0 && len(o.Loads) > 1 {
		worst := 0
		for i := 1; i < len(o.Loads); i++ {
			n := RefineIterations(o.Loads[i]/o.Loads[i-1], o.Precision)
			if o.Mode == results.SweepConcurrency {
				// Whole workers: the bisection also ends when the gap is one worker.
				n = min(n, bitsFor(o.Loads[i]-o.Loads[i-1]))
			}
			worst = max(worst, n)
		}
		p.RefineSteps = worst
		p.MaxRefineRuns = d * worst * maxRounds
	}
	per := o.StepTime
	p.Refine = per * time.Duration(p.MaxRefineRuns)
	refine, typical := p.Refine, per*time.Duration(d*p.RefineSteps*rounds)
	if o.Budget > 0 {
		// The budget is checked before each run: the last one may end a run past it.
		refine, typical = min(refine, o.Budget+per), min(typical, o.Budget+per)
	}
	p.Probes, p.PacedRates = probeTime(&o)
	p.Typical = p.Probes + per*time.Duration(p.FloorRuns+p.GridRuns) + typical
	p.Max = p.Probes + per*time.Duration(p.FloorRuns+p.MaxGridRuns) + refine
	return p
}

// bitsFor is how many halvings take a gap of n workers to one.
func bitsFor(n float64) int {
	k := 0
	for n > 1 {
		n, k = n/2, k+1
	}
	return k
}
