package report

import (
	"cmp"
	"fmt"
	"image/color"
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
	for _, d := range v.drivers {
		var p50, p99, ps plotter.XYs
		var bars intervalBars
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
		if err := addLine(p, d.color, d.Driver+" p99", p99, nil, true); err != nil {
			return nil, err
		}
		if err := addLine(p, d.color, d.Driver+" p50", p50, []vg.Length{vg.Points(5), vg.Points(3)}, true); err != nil {
			return nil, err
		}
		if extra && positive(ps) {
			if err := addLine(p, d.color, d.Driver+" "+v.sloName(), ps, []vg.Length{vg.Points(1.5), vg.Points(2.5)}, true); err != nil {
				return nil, err
			}
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

// intervalBars are the points of a driver's SLO percentile with the intervals across rounds,
// as plotter.NewYErrorBars takes them.
type intervalBars struct {
	plotter.XYs
	plotter.YErrors
}
