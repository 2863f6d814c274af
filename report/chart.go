package report

import (
	"bytes"
	"fmt"
	"io"
	"regexp"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// DPI is the resolution of the PNG files: CSS pixels, so a PNG has the size its SVG shows at
// in a browser at 100% zoom.
const DPI = 96

// Chart is one chart of a report: a gonum plot drawn the same way as SVG for the page and as
// PNG for the files. It is not safe for concurrent use.
type Chart struct {
	// ID names the chart's PNG file (ID + ".png") and its anchor in the page; unique in a
	// Report.
	ID string
	// Title is the chart's heading; Caption says how to read it.
	Title, Caption string

	plot          *figure
	width, height vg.Length
}

// WriteSVG draws the chart as a standalone SVG document. It is not safe for concurrent use.
func (c *Chart) WriteSVG(w io.Writer) error {
	canvas := vgsvg.New(c.width, c.height)
	if err := c.draw(canvas); err != nil {
		return err
	}
	_, err := canvas.WriteTo(w)
	return err
}

// WritePNG draws the chart as a PNG image of DPI dots per inch. It is not safe for concurrent
// use.
func (c *Chart) WritePNG(w io.Writer) error {
	canvas := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(c.width, c.height), vgimg.UseDPI(DPI))}
	if err := c.draw(canvas); err != nil {
		return err
	}
	_, err := canvas.WriteTo(w)
	return err
}

// draw draws the plot, turning a panic of the plotting library (it panics on, say, a log
// axis over a non-positive range, which the chart builders are meant to rule out) into an
// error, so that a result file nobody foresaw fails one report, not the process.
func (c *Chart) draw(canvas vg.CanvasSizer) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("chart %s: %v", c.ID, p)
		}
	}()
	dc := draw.New(canvas)
	if len(c.plot.legend) == 0 {
		c.plot.Draw(dc)
		return nil
	}
	area, cols, rows := c.layout(dc)
	c.plot.Draw(area)
	leg := c.plot.Legend
	for col, cc := range cols {
		l := plot.NewLegend()
		l.TextStyle, l.Padding, l.ThumbnailWidth = leg.TextStyle, legendPadding, leg.ThumbnailWidth
		l.Top, l.Left = true, true
		for _, e := range c.plot.legend[col*rows : min((col+1)*rows, len(c.plot.legend))] {
			l.Add(e.name, e.thumbs...)
		}
		l.Draw(cc)
	}
	return nil
}

// legendPadding is the room between a legend's lines.
const legendPadding = 3 * vg.Millimeter / 2

// layout places the plot and its legend on dc: the legend to the right of the plot, in
// columns of rows entries, as many columns as the entries need to fit the chart's height;
// the plot takes what is left, at least half the width.
func (c *Chart) layout(dc draw.Canvas) (area draw.Canvas, cols []draw.Canvas, rows int) {
	if len(c.plot.legend) == 0 {
		return dc, nil, 0
	}
	leg := c.plot.Legend
	sty := leg.TextStyle
	rowH := sty.Rectangle("Ag").Max.Y + legendPadding
	colW := vg.Length(0)
	for _, e := range c.plot.legend {
		colW = max(colW, leg.ThumbnailWidth+sty.Rectangle("  "+e.name).Max.X)
	}
	top := c.plot.Title.TextStyle.Rectangle(c.plot.Title.Text).Max.Y + c.plot.Title.Padding + vg.Points(8)
	rows = max(int((dc.Max.Y-dc.Min.Y-top-vg.Points(8))/rowH), 1)
	n := (len(c.plot.legend) + rows - 1) / rows
	rows = (len(c.plot.legend) + n - 1) / n // balance the columns
	gap := vg.Points(10)
	width := min(vg.Length(n)*(colW+gap), (dc.Max.X-dc.Min.X)/2)
	area = draw.Crop(dc, 0, -width, 0, 0)
	for col := 0; col < n; col++ {
		x := dc.Max.X - width + gap/2 + vg.Length(col)*(width/vg.Length(n))
		cols = append(cols, draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: dc.Min.Y}, Max: vg.Point{X: dc.Max.X, Y: dc.Max.Y - top}}})
	}
	return area, cols, rows
}

// svgHead matches what an inline <svg> in HTML does without: the XML declaration, the
// generator comment and the namespace attributes (the HTML parser puts <svg> in the SVG
// namespace by itself). Dropping the namespace URIs leaves the page without a single URL.
var svgHead = regexp.MustCompile(`<\?xml[^>]*\?>|<!--[^>]*-->|\s+xmlns(:\w+)?="[^"]*"`)

// inlineSVG returns the chart's SVG ready to sit inside an HTML page.
func (c *Chart) inlineSVG() ([]byte, error) {
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(svgHead.ReplaceAll(buf.Bytes(), nil)), nil
}
