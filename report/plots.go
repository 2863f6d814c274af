package report

import (
	"github.com/lockbench/lockbench/results"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// figure is a plot with its legend kept apart from it: Chart.draw lays the legend out beside
// the plot area, in as many columns as its entries need, so that it never covers the data.
// gonum's own legend is drawn inside the plot area, and a legend of twelve long names took
// half of it.
type figure struct {
	*plot.Plot
	legend []legendEntry
	// marked counts the points marked per sweep verdict (sweep charts only): what the legend
	// and the caption name.
	marked map[string]int
}

// legendEntry is one line of a figure's legend.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// addLegend adds an entry to the figure's legend.
func (p *figure) addLegend(name string, thumbs ...plot.Thumbnailer) {
	p.legend = append(p.legend, legendEntry{name, thumbs})
}

// newPlot returns a figure with the title and axis labels and a light grid.
func newPlot(title, x, y string) *figure {
	p := plot.New()
	// Liberation Sans (gonum's own copy, so the PNGs look the same everywhere) has the metrics
	// of Arial and Helvetica, which the page asks browsers for: the SVG's legends then fit.
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		f.Variant = "Sans"
	}
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.ThumbnailWidth = vg.Points(24)
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	grid.Horizontal.Width = vg.Points(0.5)
	grid.Vertical.Width = vg.Points(0.5)
	p.Add(grid)
	return &figure{Plot: p}
}

// logLatencyY makes p's y axis a log axis of microseconds.
func logLatencyY(p *figure) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = latencyTicks{}
}

// palette is Tableau 10: ten colors that stay apart for most color vision and in print, where
// gonum's plotutil palette has seven, two of them reds. A report gives each driver one of them
// (see styles), so ten drivers can be told apart by color alone.
var palette = []color.Color{
	color.RGBA{0x4e, 0x79, 0xa7, 0xff}, // blue
	color.RGBA{0xf2, 0x8e, 0x2b, 0xff}, // orange
	color.RGBA{0xe1, 0x57, 0x59, 0xff}, // red
	color.RGBA{0x76, 0xb7, 0xb2, 0xff}, // teal
	color.RGBA{0x59, 0xa1, 0x4f, 0xff}, // green
	color.RGBA{0xb0, 0x7a, 0xa1, 0xff}, // purple
	color.RGBA{0x9c, 0x75, 0x5f, 0xff}, // brown
	color.RGBA{0xff, 0x9d, 0xa7, 0xff}, // pink
	color.RGBA{0xba, 0xb0, 0xac, 0xff}, // gray
	color.RGBA{0xed, 0xc9, 0x48, 0xff}, // yellow, last: the faintest on white
}

// seriesColor is the i-th series' color; after ten they repeat.
func seriesColor(i int) color.Color { return palette[i%len(palette)] }

// lineStyle is the i-th series' line: its own color, solid.
func lineStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: seriesColor(i), Width: vg.Points(1.6)}
}

// dashPatterns tell a driver's variants (sets, topologies) apart: solid, dashed, dotted,
// dash-dot, long dashes; after five they repeat.
var dashPatterns = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2.5)},
	{vg.Points(7), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)},
	{vg.Points(12), vg.Points(4)},
}

// dashes is the i-th variant's dash pattern.
func dashes(i int) []vg.Length { return dashPatterns[i%len(dashPatterns)] }

// addLine adds a line through xys in the i-th series' style (with dashes, if given) and
// with its points marked when there are few, and names it in the legend.
func addLine(p *figure, i int, name string, xys plotter.XYs, dashes []vg.Length, points bool) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.LineStyle = lineStyle(i)
	l.LineStyle.Dashes = dashes
	p.Add(l)
	if !points {
		if name != "" {
			p.addLegend(name, l)
		}
		return nil
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	p.Add(s)
	if name != "" {
		p.addLegend(name, l, s)
	}
	return nil
}

// positive reports whether every y of xys can go on a log axis.
func positive(xys plotter.XYs) bool {
	for _, xy := range xys {
		if !(xy.Y > 0) {
			return false
		}
	}
	return len(xys) > 0
}

// padLogRange widens a log axis whose data span less than a factor of 2 (one value, say) to
// a factor of 4 around it, since a log axis needs a range above zero to draw.
func padLogRange(a *plot.Axis) {
	if a.Max < 2*a.Min {
		mid := math.Sqrt(a.Min * a.Max)
		a.Min, a.Max = mid/2, mid*2
	}
}

// latencyY keeps a latency inside what the histograms record, 1µs to 60s
// (results.MinLatencyUS, MaxLatencyUS), so that a log axis always has a positive, finite
// range, whatever a hand-edited result file says.
func latencyY(us float64) float64 {
	if math.IsNaN(us) {
		return results.MinLatencyUS
	}
	return min(max(us, results.MinLatencyUS), results.MaxLatencyUS)
}
