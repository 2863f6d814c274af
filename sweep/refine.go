package sweep

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/lockbench/lockbench/results"
)

// Reasons the refinement of a driver's bracket ended (results.KneeBracket.Refined).
const (
	RefinedPrecise  = "within the precision"
	RefinedBudget   = "the time budget ran out"
	RefinedAdjacent = "no load between the bracket's two steps"
	RefinedNothing  = "nothing to refine: no step was ok, or none above the highest ok step was not"
	RefinedStopped  = "interrupted"
)

// bracket is where steps put the knee: the highest-load ok step, and the lowest-load step
// above it that was decided not ok (over, saturated, failed or uncertain; an interrupted
// step says nothing). With no ok step, the upper end is the lowest step that was not ok.
func bracket(steps []results.SweepStep) results.KneeBracket {
	var b results.KneeBracket
	for _, st := range steps {
		if st.Verdict == results.VerdictOK && st.Load > b.OKLoad {
			b.OKStep, b.OKLoad = st.Step, st.Load
		}
	}
	for _, st := range steps {
		if st.Verdict == results.VerdictOK || st.Verdict == results.VerdictIncomplete || st.Load <= b.OKLoad {
			continue
		}
		if b.OverStep == 0 || st.Load < b.OverLoad {
			b.OverStep, b.OverLoad, b.OverVerdict = st.Step, st.Load, st.Verdict
		}
	}
	if b.OKLoad > 0 && b.OverLoad > 0 {
		b.Width = b.OverLoad/b.OKLoad - 1
	}
	return b
}

// between is the load a refinement tries between lo and hi: for rates their geometric mean
// (the grid is geometric, and a knee is as likely at any factor), rounded to 3 significant
// digits; for workers the middle count. ok is false when no such load lies strictly between.
func between(mode string, lo, hi float64) (float64, bool) {
	var mid float64
	if mode == results.SweepConcurrency {
		mid = math.Floor((lo + hi) / 2)
	} else {
		mid = roundSignificant(math.Sqrt(lo*hi), 3)
		if !(mid > lo && mid < hi) {
			mid = roundSignificant(math.Sqrt(lo*hi), 6)
		}
	}
	return mid, mid > lo && mid < hi
}

// RefineIterations is the most bisections that narrow a bracket from ratio (upper load over
// lower) to within precision: each halves the bracket's log-width. It is safe for concurrent
// use.
func RefineIterations(ratio, precision float64) int {
	if !(precision > 0) || !(ratio > 1+precision) {
		return 0
	}
	return int(math.Ceil(math.Log2(math.Log(ratio) / math.Log1p(precision))))
}

// refine bisects every driver's bracket, the drivers interleaved, until each is within the
// precision, cannot be split, or the budget would be passed.
func (sw *sweeper) refine(ctx context.Context) error {
	sw.refining = true
	o := sw.o
	if o.Precision <= 0 {
		return nil
	}
	sw.refineStart = sw.runWall
	for _, s := range sw.states {
		if s.skipped {
			continue
		}
		b := bracket(s.rec.Steps)
		if b.OKLoad == 0 || b.OverLoad == 0 {
			s.refined = RefinedNothing
		}
	}
	for {
		var jobs []*job
		for _, s := range sw.states {
			if s.skipped || s.refined != "" {
				continue
			}
			b := bracket(s.rec.Steps)
			if b.Width <= o.Precision {
				s.refined = RefinedPrecise
				continue
			}
			mid, ok := between(o.Mode, b.OKLoad, b.OverLoad)
			if !ok {
				s.refined = RefinedAdjacent
				continue
			}
			refined := 0
			for _, st := range s.rec.Steps {
				if st.Refined {
					refined++
				}
			}
			// Refined steps are numbered on after the grid, in the order they run.
			jobs = append(jobs, &job{s: s, load: mid, refined: true, index: len(o.Loads) + refined + 1})
		}
		if len(jobs) == 0 {
			return nil
		}
		if ctx.Err() != nil {
			sw.endRefinement(RefinedStopped)
			return nil
		}
		// The budget bounds the refinement's time: an iteration starts only when its planned
		// rounds fit what is left (extra rounds of an uncertain step check it too).
		if sw.overBudget(len(jobs) * o.Rounds) {
			sw.endRefinement(RefinedBudget)
			return nil
		}
		if err := sw.runStep(ctx, jobs); err != nil {
			return err
		}
	}
}

// overBudget reports whether n more runs would take the refinement past its budget; never
// during the grid.
func (sw *sweeper) overBudget(n int) bool {
	if !sw.refining || sw.o.Budget <= 0 {
		return false
	}
	return sw.runWall-sw.refineStart+sw.perRun()*time.Duration(n) > sw.o.Budget
}

// endRefinement marks every driver still refining with why it ended.
func (sw *sweeper) endRefinement(why string) {
	for _, s := range sw.states {
		if !s.skipped && s.refined == "" {
			s.refined = why
		}
	}
}

// describe is a bracket as the summary gives it: "≥ 20000/s (ok), < 21000/s (over)", or with
// an uncertain upper end "≥ 20000/s (ok), 21000/s uncertain": the SLO percentile is within
// the rounds' noise of the limit there, so the knee is about that load, on one side or the
// other.
func describe(mode string, b *results.KneeBracket) string {
	switch {
	case b.OverVerdict == results.VerdictUncertain && b.OKStep == 0:
		return fmt.Sprintf("%s uncertain", fmtKnee(mode, b.OverLoad))
	case b.OverVerdict == results.VerdictUncertain:
		return fmt.Sprintf("≥ %s (ok), %s uncertain", fmtKnee(mode, b.OKLoad), fmtKnee(mode, b.OverLoad))
	case b.OKStep == 0 && b.OverStep == 0:
		return "none"
	case b.OKStep == 0:
		return fmt.Sprintf("< %s (%s)", fmtKnee(mode, b.OverLoad), b.OverVerdict)
	case b.OverStep == 0:
		return fmt.Sprintf("≥ %s (ok)", fmtKnee(mode, b.OKLoad))
	}
	return fmt.Sprintf("≥ %s (ok), < %s (%s)", fmtKnee(mode, b.OKLoad), fmtKnee(mode, b.OverLoad), b.OverVerdict)
}
