package report

import (
	"gonum.org/v1/plot/plotter"
)

// roundsChart draws each round's throughput for the groups that ran more than once (--repeat),
// one line per group; nil when none did. The y axis starts at zero, so the spread between
// rounds shows at its true size relative to the throughput.
func roundsChart(groups []*group) (*Chart, error) {
	p := newPlot("Throughput per round", "round", "acquisitions per second")
	p.X.Tick.Marker = integerTicks{}
	p.Y.Tick.Marker = rateTicks{}
	n := 0
	for _, g := range groups {
		var xys plotter.XYs
		for i, r := range g.Runs {
			if r.Acquisitions <= 0 {
				continue
			}
			round := r.Round
			if round <= 0 { // runs pooled from files without rounds: their order
				round = i + 1
			}
			xys = append(xys, plotter.XY{X: float64(round), Y: r.ThroughputPerS})
		}
		if len(xys) < 2 {
			continue
		}
		if err := addLine(p, g.color, g.label, xys, dashes(g.dash), true); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	p.Y.Min = 0
	p.X.Min, p.X.Max = p.X.Min-0.3, p.X.Max+0.3 // no point on the frame
	return &Chart{
		ID:    "rounds",
		Title: "Throughput per round",
		Caption: "Each point is one round of --repeat: the drivers ran interleaved, so rounds " +
			"that dip together were slowed by the machine, and the spread of one line is the " +
			"noise a single run carries.",
		plot: p,
	}, nil
}
