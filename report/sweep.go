package report

import (
	"cmp"
	"fmt"
	"image/color"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/lockbench/lockbench/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// sweepView is one source's sweep (results.Sweep, written by lockbench sweep), driver by
// driver.
type sweepView struct {
	src     int
	name    string
	sweep   *results.Sweep
	drivers []*sweepDriver
}

// sweepDriver is one driver's steps, with its knee.
type sweepDriver struct {
	results.SweepDriver
	steps []sweepPoint
	knee  int // index in steps, -1 when the driver has no knee
	color int // in palette: the driver's color in the whole report
}

// sweepPoint is one step with its run; run is nil for a step that produced none.
type sweepPoint struct {
	results.SweepStep
	run *results.Run
}

func newSweepView(src int, s Source, sw *results.Sweep) *sweepView {
	v := &sweepView{src: src, name: s.Name, sweep: sw}
	for _, sd := range sw.Drivers {
		d := &sweepDriver{SweepDriver: sd, knee: -1}
		// By load: refined steps come after the grid in the record, between its steps here,
		// so that the lines run left to right.
		steps := slices.Clone(sd.Steps)
		slices.SortStableFunc(steps, func(a, b results.SweepStep) int { return cmp.Compare(a.Load, b.Load) })
		for _, st := range steps {
			pt := sweepPoint{SweepStep: st}
			if st.Run >= 0 && st.Run < len(s.File.Runs) { // results.Decode checks the range
				pt.run = &s.File.Runs[st.Run]
			}
			if sd.KneeStep > 0 && st.Step == sd.KneeStep {
				d.knee = len(d.steps)
			}
			d.steps = append(d.steps, pt)
		}
		v.drivers = append(v.drivers, d)
	}
	return v
}

// stepRuns lists the indexes in File.Runs of the sweep's runs: every round of every step, and
// the noise floor's.
func stepRuns(sw *results.Sweep) map[int]bool {
	runs := make(map[int]bool)
	for _, d := range sw.Drivers {
		for _, st := range d.Steps {
			if st.Run >= 0 {
				runs[st.Run] = true
			}
			for _, r := range st.Runs {
				runs[r] = true
			}
		}
	}
	for _, f := range sw.NoiseFloor {
		if f.Run >= 0 {
			runs[f.Run] = true
		}
	}
	return runs
}

// loadLabel says what a step's load was: "2000/s" or "16 workers".
func (v *sweepView) loadLabel(load float64) string {
	t := strconv.FormatFloat(load, 'f', -1, 64)
	switch v.sweep.Mode {
	case results.SweepRate:
		return t + "/s"
	case results.SweepConcurrency:
		return t + " workers"
	}
	return t
}

// sloName is the SLO's percentile as the user wrote it ("p99", "p999"), or made from the
// percentile when the file does not say.
func (v *sweepView) sloName() string {
	if n := v.sweep.SLO.Name; n != "" {
		return n
	}
	return percentileName(v.sweep.SLO.Percentile)
}

// extraPercentile reports whether the SLO's percentile is neither of the two the sweep chart
// always draws, p50 and p99, and so gets a line of its own.
func (v *sweepView) extraPercentile() bool {
	p := v.sweep.SLO.Percentile
	return p != 50 && p != 99
}

// percentileName is "p99" for 99, "p99.9" for 99.9.
func percentileName(p float64) string { return "p" + strconv.FormatFloat(p, 'f', -1, 64) }

// chart draws achieved throughput against acquire p99 (solid) and p50 (dashed) per driver,
// the SLO's percentile (dotted) when it is another one, the SLO line and the knees; nil when
// no step measured anything.
func (v *sweepView) chart(id string) (*Chart, error) {
	title := "Sweep: throughput against latency"
	if v.name != "" {
		title += " (" + v.name + ")"
	}
	p := newPlot(title, "achieved acquisitions per second", "acquire latency")
	p.X.Tick.Marker = rateTicks{}
	logLatencyY(p)
	slo := v.sweep.SLO
	extra := v.extraPercentile()
	n := 0
	var knees plotter.XYs
	var kneeNames []string
	p.marked = make(map[string]int)
	for _, d := range v.drivers {
		var p50, p99, ps plotter.XYs
		var bars intervalBars
		marks := make(map[string]plotter.XYs) // verdict: the points of the SLO's line
		for j, st := range d.steps {
			if st.run == nil || st.run.Acquisitions <= 0 {
				continue
			}
			// The sweep's own account of what the step achieved: in an open loop the
			// arrivals kept over the schedule's window, not completions over the phase.
			x := st.ThroughputPerS
			// A step of several rounds is judged on them pooled: its p50, and its p99 when
			// that is the SLO's, are the pooled ones; the first round's otherwise.
			y50, y99 := st.run.AcquireLatencyUS.P50, st.run.AcquireLatencyUS.P99
			if st.P50US > 0 {
				y50 = st.P50US
			}
			if slo.Percentile == 99 && st.LatencyUS > 0 {
				y99 = st.LatencyUS
			}
			p50 = append(p50, plotter.XY{X: x, Y: latencyY(y50)})
			p99 = append(p99, plotter.XY{X: x, Y: latencyY(y99)})
			if st.LatencyUS > 0 {
				ps = append(ps, plotter.XY{X: x, Y: latencyY(st.LatencyUS)})
				if iv := st.Interval; iv != nil {
					y := latencyY(st.LatencyUS)
					bars.XYs = append(bars.XYs, plotter.XY{X: x, Y: y})
					bars.YErrors = append(bars.YErrors, struct{ Low, High float64 }{y - latencyY(min(iv.LowUS, st.LatencyUS)), latencyY(max(iv.HighUS, st.LatencyUS)) - y})
				}
			}
			if extra {
				if st.LatencyUS > 0 {
					marks[st.Verdict] = append(marks[st.Verdict], ps[len(ps)-1])
				}
			} else {
				marks[st.Verdict] = append(marks[st.Verdict], p99[len(p99)-1])
			}
			if j == d.knee {
				knees = append(knees, plotter.XY{X: x, Y: latencyY(st.LatencyUS)})
				name := d.Driver + " knee: " + v.loadLabel(d.KneeLoad)
				if v.sweep.Mode != results.SweepRate {
					name += fmt.Sprintf(" (%.0f acq/s)", x)
				}
				kneeNames = append(kneeNames, name)
			}
		}
		if !positive(p99) || !positive(p50) {
			continue
		}
		// The SLO's line (p99, or the dotted one) carries the verdicts' marks instead of dots.
		if err := addLine(p, d.color, d.Driver+" p99", p99, nil, extra); err != nil {
			return nil, err
		}
		if err := addLine(p, d.color, d.Driver+" p50", p50, []vg.Length{vg.Points(5), vg.Points(3)}, true); err != nil {
			return nil, err
		}
		if extra && positive(ps) {
			if err := addLine(p, d.color, d.Driver+" "+v.sloName(), ps, []vg.Length{vg.Points(1.5), vg.Points(2.5)}, false); err != nil {
				return nil, err
			}
		}
		for _, verdict := range sortVerdicts(maps.Keys(marks)) {
			s, err := plotter.NewScatter(marks[verdict])
			if err != nil {
				return nil, err
			}
			s.GlyphStyle = verdictGlyph(verdict, seriesColor(d.color))
			p.Add(s)
			p.marked[verdict] += len(marks[verdict])
		}
		if len(bars.XYs) > 0 {
			// The interval of the SLO percentile across each step's rounds, on its point.
			eb, err := plotter.NewYErrorBars(bars)
			if err != nil {
				return nil, err
			}
			eb.LineStyle = draw.LineStyle{Color: seriesColor(d.color), Width: vg.Points(1)}
			eb.CapWidth = vg.Points(4)
			p.Add(eb)
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	p.X.Min = min(p.X.Min, 0)
	p.X.Max = min(p.X.Max*1.05, math.MaxFloat64)
	red := color.RGBA{R: 200, G: 30, B: 30, A: 255}
	if slo.LimitUS > 0 {
		limit := latencyY(slo.LimitUS)
		line, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: limit}, {X: p.X.Max, Y: limit}})
		if err != nil {
			return nil, err
		}
		line.LineStyle = draw.LineStyle{Color: red, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(8), vg.Points(4)}}
		p.Add(line)
		p.addLegend(fmt.Sprintf("SLO %s ≤ %s", v.sloName(), formatLatencyTick(slo.LimitUS)), line)
	}
	// One legend entry per verdict drawn, in gray: the shape is the verdict, the color the
	// driver.
	for _, verdict := range sortVerdicts(maps.Keys(p.marked)) {
		s := &plotter.Scatter{GlyphStyle: verdictGlyph(verdict, color.Gray{Y: 80})}
		p.addLegend(verdictName(verdict, v.sloName()), s)
	}
	for i, k := range knees {
		s, err := plotter.NewScatter(plotter.XYs{k})
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: red, Radius: vg.Points(7), Shape: draw.RingGlyph{}}
		p.Add(s)
		p.addLegend(kneeNames[i], s)
	}
	padLogRange(&p.Y)
	caption := "Each point is one step of the sweep, at the throughput it achieved: the solid " +
		"line is its acquire p99, the dashed one its p50."
	if extra {
		caption += " The dotted line is the SLO's " + v.sloName() + "."
	}
	caption += " A step's mark says its verdict: a dot within the SLO, a triangle over it, a square saturated " +
		"(the load was not achieved), a cross failed."
	caption += " The red dashed line is the SLO; a ring marks each driver's knee, the highest " +
		"load that was achieved and kept the SLO (as lockbench sweep judged it)."
	if v.sweep.MaxRounds > 1 {
		caption += " With several rounds a step, its points are the rounds pooled, and a bar spans the " +
			"confidence interval of the SLO's " + v.sloName() + " across the rounds: a bar across the SLO line is an uncertain step."
	}
	return &Chart{ID: id, Title: title, Caption: caption, plot: p}, nil
}

// spectrum draws one driver's latency spectrum at every step of the sweep, one line per
// step; nil when no step measured anything.
func (v *sweepView) spectrum(id string, d *sweepDriver) (*Chart, error) {
	title := "Sweep: " + d.Driver + " acquire latency by percentile, per step"
	p := newPlot(title, "percentile", "acquire latency")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks{}
	logLatencyY(p)
	n := 0
	for _, st := range d.steps {
		if st.run == nil {
			continue
		}
		h, err := mergedAcquire([]results.Run{*st.run})
		if err != nil {
			return nil, err
		}
		if h.TotalCount() == 0 {
			continue
		}
		if err := addLine(p, n, v.loadLabel(st.Load), spectrum(h), nil, false); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	p.X.Min, p.X.Max = 1, decadeAbove(p.X.Max)
	padLogRange(&p.Y)
	return &Chart{
		ID:      id,
		Title:   title,
		Caption: "The latency distribution of each step: where the tail lifts off as the load rises.",
		plot:    p,
	}, nil
}

// verdictOrder is the order of the verdicts in a legend, and the verdicts a sweep chart marks.
var verdictOrder = []string{results.VerdictOK, results.VerdictOver, results.VerdictUncertain, results.VerdictSaturated,
	results.VerdictFailed, results.VerdictIncomplete}

// sortVerdicts returns the verdicts in verdictOrder, any others after them by name, so that
// the chart draws the same way every time.
func sortVerdicts(verdicts iter.Seq[string]) []string {
	return slices.SortedFunc(verdicts, func(a, b string) int {
		ia, ib := slices.Index(verdictOrder, a), slices.Index(verdictOrder, b)
		if ia < 0 {
			ia = len(verdictOrder)
		}
		if ib < 0 {
			ib = len(verdictOrder)
		}
		return cmp.Or(cmp.Compare(ia, ib), cmp.Compare(a, b))
	})
}

// verdictGlyph marks a step of the verdict in color c: a filled circle for ok, a triangle
// for over the SLO, a diamond-like ring for uncertain, a square for saturated, a cross for
// failed and a plus for incomplete, so that the verdicts tell apart without color too.
func verdictGlyph(verdict string, c color.Color) draw.GlyphStyle {
	g := draw.GlyphStyle{Color: c, Radius: vg.Points(3.5)}
	switch verdict {
	case results.VerdictOK:
		g.Shape, g.Radius = draw.CircleGlyph{}, vg.Points(3)
	case results.VerdictOver:
		g.Shape = draw.TriangleGlyph{}
	case results.VerdictUncertain:
		g.Shape = draw.RingGlyph{}
	case results.VerdictSaturated:
		g.Shape = draw.BoxGlyph{}
	case results.VerdictFailed:
		g.Shape, g.Radius = draw.CrossGlyph{}, vg.Points(4)
	default:
		g.Shape, g.Radius = draw.PlusGlyph{}, vg.Points(4)
	}
	return g
}

// verdictName says what a verdict means in a legend.
func verdictName(verdict, slo string) string {
	switch verdict {
	case results.VerdictOK:
		return "step ok: within the SLO"
	case results.VerdictOver:
		return "step over: " + slo + " above the SLO"
	case results.VerdictUncertain:
		return "step uncertain: straddles the SLO"
	case results.VerdictSaturated:
		return "step saturated: load not achieved"
	case results.VerdictFailed:
		return "step failed: errors or violations"
	case results.VerdictIncomplete:
		return "step incomplete: interrupted"
	}
	return "step " + verdict
}

// intervalBars are the points of a driver's SLO percentile with the intervals across rounds,
// as plotter.NewYErrorBars takes them.
type intervalBars struct {
	plotter.XYs
	plotter.YErrors
}
