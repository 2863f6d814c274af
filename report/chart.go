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

	plot          *plot.Plot
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
	c.plot.Draw(draw.New(canvas))
	return nil
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
