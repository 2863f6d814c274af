package report

import (
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// barsCharts draw the groups' medians as grouped bars, drivers along the x axis and one bar
// per variant (set, topology, …) within a driver: throughput, and Redis CPU per acquisition
// when a group measured it. They are drawn only when the report has more than one variant
// (two labels, two topologies): with one, the summary table says it all. A bar keeps its
// driver's color; its variant is its shade, the first the full color, and the legend names
// the shades. A whisker spans the rounds' min–max throughput when there were several.
func (r *Report) barsCharts() (tput, cpu *Chart, err error) {
	if len(r.variants) < 2 {
		return nil, nil, nil
	}
	var drivers []string
	seen := make(map[string]bool)
	for _, g := range r.groups {
		if !seen[g.Driver()] && g.Measured > 0 {
			seen[g.Driver()] = true
			drivers = append(drivers, g.Driver())
		}
	}
	if len(drivers) == 0 {
		return nil, nil, nil
	}
	tput, err = r.barChart("bars-throughput", "Throughput by "+r.barsBy(), "acquisitions per second (median)", drivers,
		func(g *group) (v, lo, hi float64) {
			if g.Measured == 0 {
				return 0, 0, 0
			}
			if g.Measured > 1 {
				return g.ThroughputPerS, g.MinThroughputPerS, g.MaxThroughputPerS
			}
			return g.ThroughputPerS, g.ThroughputPerS, g.ThroughputPerS
		})
	if err != nil || tput == nil {
		return nil, nil, err
	}
	tput.Caption = "Each bar is one driver on one " + r.variantKind() + ": the median throughput over its rounds, " +
		"the whisker their min–max. Taller is better. " + r.barsKey()
	cpu, err = r.barChart("bars-redis-cpu", "Redis CPU per acquisition by "+r.barsBy(), "Redis CPU µs per acquisition (median)", drivers,
		func(g *group) (v, lo, hi float64) {
			return g.ServerCPUPerAcquisitionUS, g.ServerCPUPerAcquisitionUS, g.ServerCPUPerAcquisitionUS
		})
	if cpu != nil {
		cpu.Caption = "Redis server CPU time per acquisition (median over the rounds that measured it): what one " +
			"acquisition costs the server, so lower is better; it sets the capacity a master can sustain. " +
			"Bars missing: the run did not measure the server's CPU. " + r.barsKey()
	}
	return tput, cpu, err
}

// barsKey says how to tell the bars apart, for the bar charts' captions.
func (r *Report) barsKey() string {
	if lay := r.barLayout(); lay.order != "" {
		return "A driver keeps its color, its bars left to right: " + lay.order + "; the shade says the " +
			"label (see the legend), the name above a bar its label and " + listNames(r.differ) + "."
	}
	return "A driver keeps its color; the shade (see the legend) and the name above each bar say which " + r.variantKind() + "."
}

// barsBy says what a bar chart's bars are by: "driver and topology", "driver, label and
// topology".
func (r *Report) barsBy() string {
	return listNames(append([]string{"driver"}, r.variantKinds()...))
}

// variantKind names what the variants are, for captions: "label", "topology", "label and
// topology", …: the sets when there are several, then the case fields that differ.
func (r *Report) variantKind() string {
	kinds := r.variantKinds()
	if len(kinds) == 0 {
		return "case"
	}
	return listNames(kinds)
}

// variantKinds are the labels (when there are several sets) and the case fields that differ.
func (r *Report) variantKinds() []string {
	var kinds []string
	if len(r.groups) > 0 {
		for _, g := range r.groups {
			if g.set != r.groups[0].set {
				kinds = append(kinds, "label")
				break
			}
		}
	}
	return append(kinds, r.differ...)
}

// barChart draws value(g) of every group as a bar, nil when no group has a positive value.
func (r *Report) barChart(id, title, ylabel string, drivers []string, value func(g *group) (v, lo, hi float64)) (*Chart, error) {
	p := newPlot(title, "", ylabel)
	p.NominalX(drivers...)
	p.Y.Tick.Marker = rateTicks{}
	lay := r.barLayout()
	width := barWidth(r.width, len(drivers), lay.span)
	drawn := 0
	for di, d := range drivers {
		for _, g := range r.groups {
			if g.Driver() != d {
				continue
			}
			v, lo, hi := value(g)
			if !(v > 0) {
				continue
			}
			b, err := plotter.NewBarChart(plotter.Values{v}, width)
			if err != nil {
				return nil, err
			}
			b.XMin = float64(di)
			b.Offset = vg.Length(lay.pos[g.variant]-(lay.span-1)/2) * width
			b.Color = shade(seriesColor(g.color), lay.shade[g.variant], lay.shades)
			b.LineStyle = draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(0.5)}
			p.Add(b)
			if hi > lo {
				eb, err := plotter.NewYErrorBars(intervalBars{XYs: plotter.XYs{{X: float64(di), Y: v}}, YErrors: plotter.YErrors{{Low: v - lo, High: hi - v}}})
				if err != nil {
					return nil, err
				}
				eb.LineStyle = draw.LineStyle{Color: color.Gray{Y: 40}, Width: vg.Points(1)}
				eb.CapWidth = width / 2
				p.Add(&offsetErrorBars{YErrorBars: eb, offset: b.Offset})
			}
			if width >= vg.Points(8) {
				// The variant's name on its bar, upright above its top: shades alone are
				// hard to match with a legend beyond two.
				if err := barLabel(p, float64(di), max(v, hi), b.Offset, g.variant); err != nil {
					return nil, err
				}
			}
			drawn++
		}
	}
	if drawn == 0 {
		return nil, nil
	}
	for i, name := range lay.legend {
		swatch := &plotter.BarChart{Color: shade(color.Gray{Y: 110}, i, lay.shades),
			LineStyle: draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(0.5)}}
		if name == "" {
			name = "(all)"
		}
		p.addLegend(name, swatch)
	}
	p.Y.Min = 0
	p.Y.Max *= 1.05
	if width >= vg.Points(8) {
		p.Y.Max *= 1.25 // room for the names above the bars
	}
	return &Chart{ID: id, Title: title, plot: p}, nil
}

// barLayout is where each variant's bar stands within its driver's bars, and its shade.
type barLayout struct {
	// pos is each variant's place, in bar widths from the driver's first bar (gaps counted);
	// span the width of a driver's bars, gaps included.
	pos  map[string]float64
	span float64
	// shade is each variant's shade, of shades; legend names the shades in order.
	shade  map[string]int
	shades int
	legend []string
	// order says the bars' order for a caption when the shades name only the sets: "single
	// (v1.2, v1.3), then cluster (v1.2, v1.3)"; "" otherwise.
	order string
}

// barLayout places the variants' bars: by case first ("single", "cluster"), a half-bar gap
// between cases, and within a case by set (label), so the bars a reader compares, v1.2 and
// v1.3 on one topology, stand side by side. With several sets and several cases a bar's
// shade is its set's (the first set full color, the last the lightest) and the position and
// the name above the bar say its case; with one of either, every variant has a shade.
func (r *Report) barLayout() barLayout {
	sets, cases := r.setsAndCases()
	lay := barLayout{pos: make(map[string]float64), shade: make(map[string]int)}
	bySet := len(sets) > 1 && len(cases) > 1
	var order []string
	n := 0
	for ci, c := range cases {
		var inCase []string
		for si, s := range sets {
			for _, g := range r.groups {
				if g.cases != c || g.set != s {
					continue
				}
				if _, ok := lay.pos[g.variant]; ok {
					break
				}
				lay.pos[g.variant] = float64(n) + 0.5*float64(ci)
				if bySet {
					lay.shade[g.variant] = si
				} else {
					lay.shade[g.variant] = n
					lay.legend = append(lay.legend, g.variant)
				}
				inCase = append(inCase, s)
				n++
				break
			}
		}
		order = append(order, c+" ("+strings.Join(inCase, ", ")+")")
	}
	lay.span = float64(n) + 0.5*float64(len(cases)-1)
	lay.shades = n
	if bySet {
		lay.shades, lay.legend = len(sets), sets
		lay.order = strings.Join(order, ", then ")
	}
	return lay
}

// barLabel writes name upright above the bar at x (moved by offset) whose top is at y.
func barLabel(p *figure, x, y float64, offset vg.Length, name string) error {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: y}}, Labels: []string{name}})
	if err != nil {
		return err
	}
	sty := &l.TextStyle[0]
	sty.Font.Variant, sty.Font.Size = "Sans", vg.Points(8)
	sty.Color = color.Gray{Y: 60}
	sty.Rotation = math.Pi / 2
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	l.Offset = vg.Point{X: offset, Y: vg.Points(4)}
	p.Add(l)
	return nil
}

// barWidth is the width of one bar in a chart chartWidth wide: the drivers' slots share the
// plot area (about 60% of the chart beside the axis and the legend), and a driver's bars fill
// 75% of its slot, side by side in variant order.
func barWidth(chartWidth vg.Length, drivers int, span float64) vg.Length {
	return chartWidth * 0.6 * 0.75 / vg.Length(float64(drivers)*span)
}

// shade is the i-th of n shades of c: c itself first, then ever lighter, to 40% of it over
// white for the last, so a driver's bars keep its hue.
func shade(c color.Color, i, n int) color.Color {
	if n < 2 || i == 0 {
		return c
	}
	f := 1 - 0.6*float64(i)/float64(n-1)
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(f*float64(v>>8) + (1-f)*255) }
	return color.RGBA{mix(r), mix(g), mix(b), 0xff}
}

// offsetErrorBars draws error bars moved sideways by offset, onto a bar drawn with
// BarChart.Offset.
type offsetErrorBars struct {
	*plotter.YErrorBars
	offset vg.Length
}

// Plot implements plot.Plotter.
func (e *offsetErrorBars) Plot(c draw.Canvas, p *plot.Plot) {
	c.Rectangle = c.Rectangle.Add(vg.Point{X: e.offset})
	e.YErrorBars.Plot(c, p)
}
