package sweep

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
)

// SetupTime is the guess of a run's set-up (fresh client, clean keyspace, checker) that
// StepTime adds to its warm-up and measured phase.
const SetupTime = time.Second

// StepTime is the guess of one run's wall time that Options.StepTime wants: warmup (none when
// 0 or negative), duration, and SetupTime.
func StepTime(warmup, duration time.Duration) time.Duration {
	return max(warmup, 0) + duration + SetupTime
}

// Describe is the plan's time in one line: the typical and the most, and the runs behind them,
// e.g. "about 5m10s if every step is decided in its first rounds and no driver stops early, at
// most 10m10s (2 noise-floor runs, 36 to 72 grid runs, …)". lockbench sweep logs it first.
func (p Plan) Describe() string {
	line := fmt.Sprintf("about %v if every step is decided in its first rounds and no driver stops early, at most %v", roundSecond(p.Typical), roundSecond(p.Max))
	var parts []string
	if p.FloorRuns > 0 {
		parts = append(parts, fmt.Sprintf("%d noise-floor runs", p.FloorRuns))
	}
	if p.Probes > 0 {
		parts = append(parts, fmt.Sprintf("round-trip probes %v", roundSecond(p.Probes)))
	}
	parts = append(parts, fmt.Sprintf("%d to %d grid runs", p.GridRuns, p.MaxGridRuns))
	if p.RefineSteps > 0 {
		parts = append(parts, fmt.Sprintf("up to %d refined steps per driver (%d runs, %v, bounded by the budget)", p.RefineSteps, p.MaxRefineRuns, roundSecond(p.Refine)))
	}
	return line + " (" + strings.Join(parts, ", ") + ")"
}

// WritePlan writes what a sweep of o will run, one item a line (lockbench sweep --dry-run): the
// loads, the drivers, the SLO, each run's warm-up (warmup, none when 0 or negative) and
// measured phase (o.Duration) and its wall time (o.StepTime), the noise floor, the rounds, the
// refinement, and the time PlanTime(o) gives. Zero Rounds and MaxRounds read as Run reads them.
// It is safe for concurrent use with distinct writers.
func WritePlan(w io.Writer, o Options, warmup time.Duration) error {
	var buf bytes.Buffer
	p := PlanTime(o)
	rounds := max(o.Rounds, 1)
	maxRounds := max(o.MaxRounds, rounds)
	fmt.Fprintf(&buf, "sweep over %s: %s\n", o.Mode, joinLoads(o.Mode, o.Loads))
	fmt.Fprintf(&buf, "drivers, interleaved: %s\n", strings.Join(o.Drivers, ", "))
	fmt.Fprintf(&buf, "SLO: acquire %s\n", o.SLO)
	fmt.Fprintf(&buf, "each run: warm-up %v, measuring %v (about %v with set-up)\n", max(warmup, 0), o.Duration, o.StepTime)
	if p.FloorRuns > 0 {
		fmt.Fprintf(&buf, "noise floor: one run per driver at %g%% of the first rate\n", 100*o.FloorShare)
	}
	if p.Probes > 0 {
		b := probeBoundsOf(&o)
		line := fmt.Sprintf("round trip: PINGs one at a time, back to back (up to %d or %v)", b.n, b.d)
		if len(p.PacedRates) > 0 {
			rates := make([]string, len(p.PacedRates))
			for i, r := range p.PacedRates {
				rates[i] = fmtLoad(r)
			}
			line += fmt.Sprintf(", then paced at %s/s (up to %d or %v each)", strings.Join(rates, ", "), b.pacedN, b.pacedD)
		}
		fmt.Fprintf(&buf, "%s: at most %v\n", line, roundSecond(p.Probes))
	}
	fmt.Fprintf(&buf, "rounds: %d per step, up to %d while uncertain\n", rounds, maxRounds)
	if o.Precision > 0 {
		budget := "no time bound"
		if o.Budget > 0 {
			budget = "at most " + o.Budget.String()
		}
		fmt.Fprintf(&buf, "refinement: bisect each knee's bracket to within %g%%, %s\n", 100*o.Precision, budget)
	}
	fmt.Fprintf(&buf, "time: %s\n", p.Describe())
	_, err := w.Write(buf.Bytes())
	return err
}

// roundSecond is d as progress lines show a time: to the second.
func roundSecond(d time.Duration) time.Duration { return d.Round(time.Second) }
