package sweep

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockbench/lockbench/results"
)

// WriteSummary writes s for people: the plan and the rules, the noise floor, the raw round
// trips and their warnings, one row per step in order of load (driver, step, load, achieved
// acquisitions per second, the SLO percentile of the rounds pooled, its interval across
// rounds, the rounds, the percentile as a multiple of the round trip's back to back and paced
// at the step's load where the sweep has them, the verdict, and why for a step that was not
// ok or over), then per driver the knee as a bracket, the
// percentile at each end, and why the driver stopped. It is safe for concurrent use with
// distinct writers.
func WriteSummary(w io.Writer, s *results.Sweep) error {
	var buf bytes.Buffer
	pct := s.SLO.Name
	loadHead := "target/s"
	if s.Mode == results.SweepConcurrency {
		loadHead = "workers"
	}
	fmt.Fprintf(&buf, "sweep over %s: %s\n", s.Mode, joinLoads(s.Mode, s.Loads))
	saturated := "saturated"
	if s.Mode == results.SweepConcurrency {
		saturated = "saturated twice in a row"
	}
	fmt.Fprintf(&buf, "SLO: acquire %s <= %s; a driver stops once a step failed, was %s, or was over %g × the SLO (%s)\n",
		pct, fmtLatency(s.SLO.LimitUS), saturated, s.StopFactor, fmtLatency(s.StopFactor*s.SLO.LimitUS))
	if s.Rounds > 1 || s.MaxRounds > 1 {
		fmt.Fprintf(&buf, "each step: %d rounds (up to %d while uncertain), drivers interleaved; verdict on the pooled %s and its interval across rounds (%s, at least %.0f%% coverage): ok within the SLO, over above it, uncertain across it\n",
			s.Rounds, s.MaxRounds, pct, "order statistics", 100*s.Confidence)
	}
	if s.Precision > 0 {
		budget := ""
		if s.BudgetS > 0 {
			budget = fmt.Sprintf(", within a budget of %v", time.Duration(s.BudgetS*float64(time.Second)).Round(time.Second))
		}
		fmt.Fprintf(&buf, "refinement: the knee's bracket is bisected until within %g%%%s\n", 100*s.Precision, budget)
	}
	writeFloor(&buf, s)
	buf.WriteString("\n")

	rounds := s.MaxRounds > 1
	// The SLO percentile as a multiple of the round trips', back to back and paced at the
	// step's load, where the sweep has them.
	rt := s.RoundTrip
	byRT := rt != nil && rt.LatencyUS > 0
	byPaced := len(s.PacedRoundTrips) > 0
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "driver\tstep\t%s\tacq/s\t%s", loadHead, pct)
	if rounds {
		fmt.Fprintf(tw, "\t%s interval\trounds", pct)
	}
	if byRT {
		fmt.Fprintf(tw, "\t%s/rt", pct)
	}
	if byPaced {
		fmt.Fprintf(tw, "\t%s/paced", pct)
	}
	fmt.Fprintln(tw, "\tverdict")
	for _, d := range s.Drivers {
		for _, st := range byLoad(d.Steps) {
			label := fmt.Sprintf("%d/%d", st.Step, len(s.Loads))
			if st.Refined {
				label = fmt.Sprintf("r%d", st.Step-len(s.Loads))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s", d.Driver, label, fmtLoad(st.Load), fmtRate(st.ThroughputPerS), fmtLatency(st.LatencyUS))
			if rounds {
				fmt.Fprintf(tw, "\t%s\t%d", fmtInterval(st.Interval), max(len(st.Runs), 1))
			}
			if byRT {
				fmt.Fprintf(tw, "\t%s", fmtMultiple(st.LatencyUS, rt))
			}
			if byPaced {
				fmt.Fprintf(tw, "\t%s", fmtMultiple(st.LatencyUS, pacedAt(s, st.Load)))
			}
			fmt.Fprintf(tw, "\t%s", st.Verdict)
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

	fmt.Fprintf(&buf, "\nknee: at or above the highest load achieved with %s <= %s, below the lowest load above it that was not\n", pct, fmtLatency(s.SLO.LimitUS))
	tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "driver\tknee\twidth\t%s at the ok end\t%s at the upper end\tnotes\n", pct, pct)
	var warnings []string
	for _, d := range s.Drivers {
		b := d.Knee
		if b == nil { // a file from before brackets
			bb := bracket(d.Steps)
			b = &bb
		} else {
			bb := *b // the notes must not change the file's record
			b = &bb
		}
		var notes []string
		if b.ProjectedServerCapacityPerS > 0 {
			notes = append(notes, fmt.Sprintf("projected server-bound capacity %s acq/s", fmtRate(b.ProjectedServerCapacityPerS)))
		}
		if b.Refined != "" {
			notes = append(notes, "refinement: "+b.Refined)
		}
		if d.StopReason != "" {
			verb := "stopped early"
			if !d.StoppedEarly {
				verb = "ended" // the last step would have stopped it
			}
			notes = append(notes, verb+": "+d.StopReason)
		}
		if b.Crossings == nil { // a file from before crossings
			b.Crossings = stepNumbers(crossings(d.Steps, *b))
		}
		if note := crossingsNote(s, d, *b); note != "" {
			notes = append(notes, "not one crossing of the SLO: "+note)
			warnings = append(warnings, fmt.Sprintf("warning: %s: %s does not rise steadily with the load (%s): this knee is one of several crossings of the SLO, and a sweep of the same command may find another; read the steps, not the knee",
				d.Driver, pct, note))
		}
		width := "-"
		if b.Width > 0 {
			width = strconv.FormatFloat(100*b.Width, 'f', 1, 64) + "%"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s", d.Driver, describe(s.Mode, b), width, endCell(d, b.OKStep), endCell(d, b.OverStep))
		if len(notes) > 0 { // a trailing cell: rows without notes carry no padding
			fmt.Fprint(tw, "\t"+strings.Join(notes, "; "))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, line := range warnings {
		fmt.Fprintln(&buf, line)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeFloor adds the noise floor, the raw round trips beside it (back to back, and paced), and
// their warnings: each driver's floor also as a multiple of the round trip at the same
// percentile, back to back and paced at the floor's rate, the share of the floor that is the
// network's and the server's.
func writeFloor(buf *bytes.Buffer, s *results.Sweep) {
	rt := s.RoundTrip
	var parts []string
	for _, f := range s.NoiseFloor {
		if f.LatencyUS > 0 {
			p := fmt.Sprintf("%s %s %s", f.Driver, s.SLO.Name, fmtLatency(f.LatencyUS))
			var by []string
			if rt != nil && rt.LatencyUS > 0 {
				by = append(by, fmt.Sprintf("%.1f × the round trip back to back", f.LatencyUS/rt.LatencyUS))
			}
			if paced := pacedAt(s, f.Load); paced != nil {
				by = append(by, fmt.Sprintf("%.1f × paced", f.LatencyUS/paced.LatencyUS))
			}
			if len(by) > 0 {
				p += " (" + strings.Join(by, ", ") + ")"
			}
			parts = append(parts, p)
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(buf, "noise floor at %s/s: %s\n", fmtLoad(s.NoiseFloor[0].Load), strings.Join(parts, ", "))
	}
	switch {
	case rt == nil:
	case rt.Error != "":
		fmt.Fprintf(buf, "warning: %s\n", rt.Error)
	default:
		fmt.Fprintf(buf, "raw round trip, back to back (%d PINGs one at a time in %.1fs: the network and the server, never idle; the rest of the noise floor is lockbench's or the machine's waking up): %s\n",
			rt.Count, rt.DurationS, fmtRoundTrip(s, rt))
	}
	for i := range s.PacedRoundTrips {
		p := &s.PacedRoundTrips[i]
		if p.Error != "" {
			fmt.Fprintf(buf, "warning: %s\n", p.Error)
			continue
		}
		fmt.Fprintf(buf, "raw round trip, paced at %s/s (%d PINGs in %.1fs, each at its slot of the open loop's schedule and wait: the client and the server idle between them as in a run): %s%s\n",
			fmtLoad(p.RatePerS), p.Count, p.DurationS, fmtRoundTrip(s, p), fmtFromSlot(p.FromSlot))
	}
	for _, f := range s.NoiseFloor {
		if f.Warning != "" {
			fmt.Fprintf(buf, "warning: %s: %s\n", f.Driver, f.Warning)
		}
	}
}

// fmtRoundTrip is a round trip's percentiles: "p50 68µs, p99 115µs, p99.9 184µs, max 1.20ms",
// and the SLO's own when it is another.
func fmtRoundTrip(s *results.Sweep, rt *results.SweepRoundTrip) string {
	own := ""
	if p := s.SLO.Percentile; p != 50 && p != 99 && p != 99.9 {
		own = fmt.Sprintf(", %s %s", s.SLO.Name, fmtLatency(rt.LatencyUS))
	}
	return fmt.Sprintf("p50 %s, p99 %s, p99.9 %s, max %s%s", fmtLatency(rt.P50US), fmtLatency(rt.P99US), fmtLatency(rt.P999US), fmtLatency(rt.MaxUS), own)
}

// fmtFromSlot is a paced round trip's percentiles from the requests' slots, as a run times its
// acquisitions: "; from its slot (the pacer's waking included, as a run's latency): p99 140µs,
// p99.9 1.27ms, max 4.01ms"; "" without them.
func fmtFromSlot(f *results.SweepFromSlot) string {
	if f == nil {
		return ""
	}
	return fmt.Sprintf("; from its slot (the pacer's waking included, as a run's latency): p99 %s, p99.9 %s, max %s",
		fmtLatency(f.P99US), fmtLatency(f.P999US), fmtLatency(f.MaxUS))
}

// pacedAt is the paced round trip at load, or nil when there is none with figures.
func pacedAt(s *results.Sweep, load float64) *results.SweepRoundTrip {
	for i := range s.PacedRoundTrips {
		if p := &s.PacedRoundTrips[i]; p.RatePerS == load && p.Error == "" && p.LatencyUS > 0 {
			return p
		}
	}
	return nil
}

// fmtMultiple is us as a multiple of rt's SLO percentile: "2.4"; "-" without one.
func fmtMultiple(us float64, rt *results.SweepRoundTrip) string {
	if rt == nil || rt.Error != "" || rt.LatencyUS <= 0 || us <= 0 {
		return "-"
	}
	return strconv.FormatFloat(us/rt.LatencyUS, 'f', 1, 64)
}

// endCell is the SLO percentile at one end of a bracket: "1.95ms (1.90–2.00ms, 3 rounds)".
func endCell(d results.SweepDriver, step int) string {
	if step == 0 {
		return "-"
	}
	st := stepOf(d, step)
	c := fmtLatency(st.LatencyUS)
	if st.Interval != nil {
		c += fmt.Sprintf(" (%s, %d rounds)", fmtInterval(st.Interval), len(st.Runs))
	}
	return c
}

func fmtInterval(iv *results.SweepInterval) string {
	if iv == nil {
		return "-"
	}
	return fmtLatency(iv.LowUS) + "–" + fmtLatency(iv.HighUS)
}

// byLoad returns steps in order of load (refined steps between the grid steps they refine).
func byLoad(steps []results.SweepStep) []results.SweepStep {
	s := slices.Clone(steps)
	slices.SortStableFunc(s, func(a, b results.SweepStep) int { return cmp.Compare(a.Load, b.Load) })
	return s
}

// stepName is "step 3" for a grid step, "refined step r2" for a refined one.
func stepName(s *results.Sweep, st results.SweepStep) string {
	if st.Refined {
		return fmt.Sprintf("refined step r%d", st.Step-len(s.Loads))
	}
	return fmt.Sprintf("step %d", st.Step)
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

// joinLoads is a sweep's loads and their unit: "1, 2, 4 workers (closed loop)".
func joinLoads(mode string, loads []float64) string {
	parts := make([]string, len(loads))
	for i, l := range loads {
		parts[i] = fmtLoad(l)
	}
	unit := " acquisitions/s (open loop)"
	if mode == results.SweepConcurrency {
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
