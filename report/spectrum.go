package report

import (
	"fmt"
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lockbench/lockbench/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// spectrumTicks is how finely the spectrum samples a histogram: ticks per halving of the
// distance to 100%, as in HdrHistogram's percentile output (results.HgrmTicksPerHalfDistance).
const spectrumTicks = results.HgrmTicksPerHalfDistance

// spectrumChart draws the acquire latency spectrum of each group that measured something,
// from its runs' histograms merged; nil when none did.
func spectrumChart(id, title string, groups []*group) (*Chart, error) {
	p := newPlot(title, "percentile", "acquire latency")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks{}
	logLatencyY(p)
	n := 0
	for _, g := range groups {
		h, err := mergedAcquire(g.Runs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.label, err)
		}
		if h.TotalCount() == 0 {
			continue
		}
		if err := addLine(p, g.color, g.label, spectrum(h), dashes(g.dash), false); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	// The axis ends on a labelled decade, 90% at least.
	p.X.Min, p.X.Max = 1, decadeAbove(p.X.Max)
	padLogRange(&p.Y)
	return &Chart{
		ID:    id,
		Title: title,
		Caption: "Each line is one driver's acquire latency distribution (all rounds merged): " +
			"read a line at 99% for its p99. The x axis is 1/(1-q) on a log scale, so each step " +
			"right is ten times rarer; a line ends at its slowest acquisition.",
		plot: p,
	}, nil
}

// mergedAcquire merges the acquire histograms of the runs that measured something. The
// histograms share their geometry (results.Recorder), so nothing is lost.
func mergedAcquire(runs []results.Run) (*hdrhistogram.Histogram, error) {
	var sum *hdrhistogram.Histogram
	for i := range runs {
		if runs[i].Acquisitions <= 0 {
			continue
		}
		h, _, _, err := runs[i].Histograms.Decode()
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = h
			continue
		}
		sum.Merge(h)
	}
	if sum == nil {
		sum = hdrhistogram.New(results.MinLatencyUS, results.MaxLatencyUS, results.SigFigs)
	}
	return sum, nil
}

// spectrum returns the points of h's percentile spectrum: x = 1/(1-q), y = the latency at
// q. The iteration ends at 100%, which has no place on the axis; the maximum goes at
// x = count instead, the rarest quantile the sample can tell (one in count).
func spectrum(h *hdrhistogram.Histogram) plotter.XYs {
	n := float64(h.TotalCount())
	var xys plotter.XYs
	for _, b := range h.CumulativeDistributionWithTicks(spectrumTicks) {
		if b.Quantile >= 100 {
			break
		}
		x := 1 / (1 - b.Quantile/100)
		if x > n {
			break
		}
		if k := len(xys); k > 0 && x <= xys[k-1].X {
			continue
		}
		xys = append(xys, plotter.XY{X: x, Y: latencyY(float64(b.ValueAt))})
	}
	if k := len(xys); k == 0 || xys[k-1].X < n {
		xys = append(xys, plotter.XY{X: max(n, 1), Y: latencyY(float64(h.Max()))})
	}
	return xys
}

// decadeAbove is the power of ten at or above x, 10 at least, where a spectrum's axis ends so
// that its last tick is labelled.
func decadeAbove(x float64) float64 {
	return math.Pow10(int(math.Ceil(math.Log10(max(x, 10)) - 1e-9)))
}
