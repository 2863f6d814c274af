package sweep

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// A knee search assumes the SLO's percentile rises with the load, so that the SLO is crossed
// once: below the knee every step is within it, above it none is. An auto-batching client whose
// own CPU fills breaks that: more load, larger batches, less CPU per acquisition, and the
// percentile can fall again (measured: lockcore's p99 hovered around a 2 ms SLO from 10,000 to
// 40,000/s, and three sweeps of one command put the knee at 16,100, 20,000 and 38,300/s;
// docs/findings.md). Then the bracket is one of several crossings, and which one a sweep finds
// depends on the steps it ran: crossings names the steps that say so.

// crossings returns the steps that contradict b as the one crossing of the SLO, in order of
// load: below its ok end, a step that was not ok (over, uncertain or saturated: a failed or
// interrupted step says nothing about latency); above an upper end decided over or saturated, a
// step ok or within the SLO's noise (uncertain).
func crossings(steps []results.SweepStep, b results.KneeBracket) []results.SweepStep {
	var out []results.SweepStep
	decidedOver := b.OverVerdict == results.VerdictOver || b.OverVerdict == results.VerdictSaturated
	for _, st := range byLoad(steps) {
		switch {
		case b.OKStep > 0 && st.Load < b.OKLoad:
			switch st.Verdict {
			case results.VerdictOver, results.VerdictUncertain, results.VerdictSaturated:
				out = append(out, st)
			}
		case b.OverStep > 0 && decidedOver && st.Load > b.OverLoad:
			if st.Verdict == results.VerdictOK || st.Verdict == results.VerdictUncertain {
				out = append(out, st)
			}
		}
	}
	return out
}

// stepNumbers is the steps' numbers.
func stepNumbers(steps []results.SweepStep) []int {
	n := make([]int, len(steps))
	for i, st := range steps {
		n[i] = st.Step
	}
	return n
}

// crossingsNote is the summary's note on d's crossings beyond its knee's: "step 2 (10000/s),
// below the knee, was uncertain (p99 1.64ms–2.26ms)"; "" when there are none.
func crossingsNote(s *results.Sweep, d results.SweepDriver, b results.KneeBracket) string {
	var parts []string
	for _, n := range b.Crossings {
		st := stepOf(d, n)
		where := "below the knee"
		if st.Load > b.OKLoad {
			where = "above the knee's upper end"
		}
		lat := fmtLatency(st.LatencyUS)
		if st.Interval != nil {
			lat = fmtInterval(st.Interval)
		}
		parts = append(parts, fmt.Sprintf("%s (%s), %s, was %s (%s %s)", stepName(s, st), fmtKnee(s.Mode, st.Load), where, st.Verdict, s.SLO.Name, lat))
	}
	return strings.Join(parts, "; ")
}
