package sweep

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/lockbench/lockbench/results"
)

// WriteSummary writes s for people: the rules, one row per step (driver, step, load, achieved
// acquisitions per second, the SLO percentile, verdict, and why for a step that was not ok or
// over), then per driver the knee and why the driver stopped. It is safe for concurrent use
// with distinct writers.
func WriteSummary(w io.Writer, s *results.Sweep) error {
	var buf bytes.Buffer
	pct := s.SLO.Name
	loadHead := "target/s"
	if s.Mode == results.SweepConcurrency {
		loadHead = "workers"
	}
	fmt.Fprintf(&buf, "sweep over %s: %s\n", s.Mode, joinLoads(s))
	saturated := "saturated"
	if s.Mode == results.SweepConcurrency {
		saturated = "saturated twice in a row"
	}
	fmt.Fprintf(&buf, "SLO: acquire %s <= %s; a driver stops once a step failed, was %s, or was over %g × the SLO (%s)\n\n",
		pct, fmtLatency(s.SLO.LimitUS), saturated, s.StopFactor, fmtLatency(s.StopFactor*s.SLO.LimitUS))

	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "driver\tstep\t%s\tacq/s\t%s\tverdict\n", loadHead, pct)
	for _, d := range s.Drivers {
		for _, st := range d.Steps {
			fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%s", d.Driver, st.Step, len(s.Loads), fmtLoad(st.Load),
				fmtRate(st.ThroughputPerS), fmtLatency(st.LatencyUS), st.Verdict)
			if st.Step == d.KneeStep {
				fmt.Fprint(tw, " (knee)")
			}
			// The reason is a trailing cell, so rows without one carry no padding.
			if st.Reason != "" && (st.SavedS > 0 || st.Verdict != results.VerdictOK && st.Verdict != results.VerdictOver) {
				fmt.Fprint(tw, "\t"+st.Reason)
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
	stopped, saved := 0, 0.0
	for _, d := range s.Drivers {
		for _, st := range d.Steps {
			if st.SavedS > 0 {
				stopped, saved = stopped+1, saved+st.SavedS
			}
		}
	}
	if stopped > 0 {
		fmt.Fprintf(&buf, "\n%d %s stopped early, already past the SLO: %.1fs of measuring saved\n", stopped, plural(stopped, "step", "steps"), saved)
	}

	fmt.Fprintf(&buf, "\nknee: the highest load achieved with %s <= %s\n", pct, fmtLatency(s.SLO.LimitUS))
	tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "driver\tknee\tacq/s\t%s\tnotes\n", pct)
	for _, d := range s.Drivers {
		var notes []string
		if d.StopReason != "" {
			verb := "stopped early"
			if !d.StoppedEarly {
				verb = "ended" // the last step would have stopped it
			}
			notes = append(notes, verb+": "+d.StopReason)
		}
		if dip := dipBelowKnee(d); dip > 0 {
			notes = append(notes, fmt.Sprintf("step %d, below the knee, was over: a noisy machine?", dip))
		}
		if d.KneeStep == 0 {
			fmt.Fprintf(tw, "%s\tnone\t-\t-", d.Driver)
		} else {
			st := stepOf(d, d.KneeStep)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s", d.Driver, fmtKnee(s.Mode, d.KneeLoad), fmtRate(st.ThroughputPerS), fmtLatency(st.LatencyUS))
		}
		if len(notes) > 0 { // a trailing cell: rows without notes carry no padding
			fmt.Fprint(tw, "\t"+strings.Join(notes, "; "))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	_, err := w.Write(buf.Bytes())
	return err
}

// stepOf returns d's record of step n (d has one: n is its knee).
func stepOf(d results.SweepDriver, n int) results.SweepStep {
	for _, st := range d.Steps {
		if st.Step == n {
			return st
		}
	}
	return results.SweepStep{}
}

// dipBelowKnee returns the first step below the knee that was over the SLO, or 0.
func dipBelowKnee(d results.SweepDriver) int {
	for _, st := range d.Steps {
		if st.Step < d.KneeStep && st.Verdict == results.VerdictOver {
			return st.Step
		}
	}
	return 0
}

func joinLoads(s *results.Sweep) string {
	parts := make([]string, len(s.Loads))
	for i, l := range s.Loads {
		parts[i] = fmtLoad(l)
	}
	unit := " acquisitions/s (open loop)"
	if s.Mode == results.SweepConcurrency {
		unit = " workers (closed loop)"
	}
	return strings.Join(parts, ", ") + unit
}

func fmtLoad(l float64) string {
	return strconv.FormatFloat(l, 'f', -1, 64)
}

func fmtKnee(mode string, l float64) string {
	if mode == results.SweepConcurrency {
		if l == 1 {
			return "1 worker"
		}
		return fmtLoad(l) + " workers"
	}
	return fmtLoad(l) + "/s"
}

// fmtLatency formats microseconds in a unit people read at a glance.
func fmtLatency(us float64) string {
	switch {
	case us <= 0:
		return "-"
	case us < 999.5:
		return strconv.FormatFloat(us, 'f', 0, 64) + "µs"
	case us < 9_995:
		return strconv.FormatFloat(us/1e3, 'f', 2, 64) + "ms"
	case us < 99_950:
		return strconv.FormatFloat(us/1e3, 'f', 1, 64) + "ms"
	case us < 999_500:
		return strconv.FormatFloat(us/1e3, 'f', 0, 64) + "ms"
	}
	return strconv.FormatFloat(us/1e6, 'f', 2, 64) + "s"
}

func fmtRate(perS float64) string {
	if perS < 100 {
		return strconv.FormatFloat(perS, 'f', 1, 64)
	}
	return strconv.FormatFloat(perS, 'f', 0, 64)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
