package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// maxNamedTimelines is how many runs a timeline chart names one by one in its legend; with
// more (six drivers of three rounds), the legend names the drivers by color and the rounds by
// dash instead.
const maxNamedTimelines = 8

// minTimelinePoints is the fewest intervals a run's timeline line has: two points make a
// line but not a shape (no dip, no burst between two ends), and the 2 s runs of a 24-group
// report drew 144 such strokes that said nothing.
const minTimelinePoints = 3

// timelineRun is one run's timeline as lines: its driver's color, and its variant's dashes
// (its round's, when the report has one variant).
type timelineRun struct {
	name       string
	color      int
	dash       int
	round      int
	rate, lat  plotter.XYs
	groupLabel string
	driver     string
	variant    string
}

// timelineCharts draw the runs' timelines, one line per run that has one: throughput and
// acquire p99 second by second. They are nil when no run has a timeline (files from before
// timelines, runs that never measured). The notes say which measured runs are in no timeline
// and why, so that a missing or thin chart is explained rather than blank: a line needs three
// intervals (minTimelinePoints) of at least half the timeline's interval, which a 2-second run
// at the default 1 s interval does not have.
func timelineCharts(groups []*group) (tput, p99 *Chart, notes []string) {
	var runs []timelineRun
	var none, short []string // groups with measured runs without a timeline, or too short for one
	shortest, interval := math.Inf(1), 0.0
	rounds := 0
	variants := false
	for _, g := range groups {
		variants = variants || g.dash > 0
	}
	for _, g := range groups {
		noneHere, shortHere := false, false
		for _, r := range g.Runs {
			tl := r.Timeline
			if r.Acquisitions <= 0 {
				continue // said by Report.notes: measured nothing
			}
			if tl == nil {
				noneHere = true
				continue
			}
			tr := timelineRun{name: g.label, color: g.color, dash: g.dash, round: max(r.Round, 1), groupLabel: g.label,
				driver: g.Driver(), variant: g.variant}
			if !variants {
				tr.dash = tr.round - 1
			}
			if len(g.Runs) > 1 && r.Round > 0 {
				tr.name += " r" + strconv.Itoa(r.Round)
			}
			for _, pt := range tl.Points {
				if pt.DurationS < tl.IntervalS/2 {
					continue // the sliver at the end: too short for a rate or a p99
				}
				mid := pt.StartS + pt.DurationS/2
				tr.rate = append(tr.rate, plotter.XY{X: mid, Y: pt.ThroughputPerS})
				if pt.AcquireP99US > 0 { // an interval with no acquisition has no p99
					tr.lat = append(tr.lat, plotter.XY{X: mid, Y: latencyY(pt.AcquireP99US)})
				}
			}
			if len(tr.rate) < minTimelinePoints {
				// One point is no line (and, unmarked, nothing at all on the chart), two no shape.
				shortHere = true
				shortest, interval = min(shortest, r.DurationS), max(interval, tl.IntervalS)
				continue
			}
			runs = append(runs, tr)
			rounds = max(rounds, tr.round)
		}
		if noneHere {
			none = append(none, g.label)
		}
		if shortHere {
			short = append(short, g.label)
		}
	}
	if len(short) > 0 {
		which, word := listNames(short), runsWord(len(short))
		if len(short) > 2 && len(short) == len(groups)-len(none) {
			// Every group with a timeline: 24 names would bury the reason.
			which, word = "runs of every driver", "the shortest run"
		}
		note := fmt.Sprintf("No timeline drawn for %s: %s lasted %s, and a timeline needs at least three of its %s intervals "+
			"to draw a line with a shape: run for %s or more (--duration) to see one.",
			which, word, seconds(shortest), seconds(interval), seconds(minTimelinePoints*interval))
		if len(runs) > 0 {
			note += " The timeline charts show the runs that lasted longer."
		}
		notes = append(notes, note)
	}
	switch {
	case len(none) > 0 && len(runs) == 0 && len(short) == 0:
		notes = append(notes, "No timeline: the runs have none (their result files were written before timelines were recorded).")
	case len(none) > 0:
		notes = append(notes, fmt.Sprintf("No timeline for %s: the result file has none (written before timelines were recorded).", listNames(none)))
	}
	if len(runs) == 0 {
		return nil, nil, notes
	}
	pt := newPlot("Throughput over time", "seconds into the measured phase", "acquisitions per second")
	pt.Y.Tick.Marker = rateTicks{}
	pl := newPlot("Acquire p99 over time", "seconds into the measured phase", "acquire p99")
	logLatencyY(pl)
	// Every second labelled (up to 31 s), not gonum's 1, 3, 5.
	pt.X.Tick.Marker, pl.X.Tick.Marker = integerTicks{}, integerTicks{}
	named := len(runs) <= maxNamedTimelines
	nl := 0
	for _, tr := range runs {
		// A driver keeps its color; its variants (or, with none, its rounds) differ in dashes.
		dashes := dashes(tr.dash)
		name := tr.name
		if !named {
			name = ""
		}
		points := named && len(tr.rate) <= 30
		if addLine(pt, tr.color, name, tr.rate, dashes, points) != nil {
			continue
		}
		if positive(tr.lat) && addLine(pl, tr.color, name, tr.lat, dashes, points) == nil {
			nl++
		}
	}
	entries := len(runs)
	if !named {
		entries = legendByColorAndDash(pt, runs, rounds, variants)
		legendByColorAndDash(pl, runs, rounds, variants)
	}
	caption := "Acquisitions completed in each second of the measured phase (warm-up " +
		"excluded), one line per run in its driver's color, " + dashWhat(variants) + ": a dip is a stall, a " +
		"fault or a noisy neighbour. The last, partial second is left out when shorter " +
		"than half a second."
	if n := faultMarks(pt, groups, runs); n > 0 {
		entries++
		caption += " Gray vertical lines: when a --fault fired (see the result file's faults)."
	}
	pt.Y.Min = 0
	tput = &Chart{
		ID:      "timeline-throughput",
		Title:   "Throughput over time",
		Caption: caption,
		plot:    pt,
	}
	if nl > 0 {
		padLogRange(&pl.Y)
		p99 = &Chart{
			ID:    "timeline-p99",
			Title: "Acquire p99 over time",
			Caption: "The 99th percentile of the acquire latencies of each second, one line " +
				"per run: whether the tail is steady or comes in bursts.",
			plot: pl,
		}
	}
	return tput, p99, notes
}

// dashWhat says what a timeline's dash patterns tell apart.
func dashWhat(variants bool) string {
	if variants {
		return "its label or case dashed differently (see the legend)"
	}
	return "its rounds dashed differently"
}

// listNames lists names for a sentence: "a", "a and b", "a, b and c", at most eight and a
// count of the rest.
func listNames(names []string) string {
	if len(names) > 8 {
		names = append(slices.Clone(names[:8]), fmt.Sprintf("%d more", len(names)-8))
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// runsWord names the run whose length the note gives.
func runsWord(groups int) string {
	if groups == 1 {
		return "its shortest run"
	}
	return "the shortest run"
}

// legendByColorAndDash names the drivers by color and the variants (or rounds) by dash
// pattern, for charts with too many runs to name each; it returns the number of entries it
// added.
func legendByColorAndDash(p *figure, runs []timelineRun, rounds int, variants bool) int {
	n := 0
	seen := make(map[int]bool)
	for _, tr := range runs {
		if seen[tr.color] {
			continue
		}
		seen[tr.color] = true
		name := tr.groupLabel
		if variants {
			name = tr.driver // the variants are named by dash below
		}
		p.addLegend(name, legendLine(seriesColor(tr.color), nil))
		n++
	}
	if variants {
		dashSeen := make(map[int]bool)
		for _, tr := range runs {
			if dashSeen[tr.dash] {
				continue
			}
			dashSeen[tr.dash] = true
			p.addLegend(tr.variant, legendLine(color.Gray{Y: 90}, dashes(tr.dash)))
			n++
		}
		return n
	}
	for r := 1; r <= min(rounds, len(dashPatterns)); r++ {
		if rounds == 1 {
			break
		}
		name := "round " + strconv.Itoa(r)
		if r == len(dashPatterns) && rounds > r {
			name += ", " + strconv.Itoa(r+len(dashPatterns)) + ", …"
		}
		p.addLegend(name, legendLine(color.Gray{Y: 90}, dashes(r-1)))
		n++
	}
	return n
}

// legendLine is a legend thumbnail of a line in c with dashes.
func legendLine(c color.Color, dashes []vg.Length) plot.Thumbnailer {
	l := &plotter.Line{}
	l.LineStyle = lineStyle(0)
	l.LineStyle.Color = c
	l.LineStyle.Dashes = dashes
	return l
}

// faultMarks draws a gray vertical line on p at every instant a fault fired in the runs (one per
// distinct instant, to the millisecond), reaching the highest throughput drawn, with one legend
// entry; it returns how many it drew.
func faultMarks(p *figure, groups []*group, runs []timelineRun) int {
	top := 1.0
	for _, tr := range runs {
		for _, xy := range tr.rate {
			top = max(top, xy.Y)
		}
	}
	seen := make(map[int64]bool)
	n := 0
	for _, g := range groups {
		for _, r := range g.Runs {
			for _, f := range r.Faults {
				ms := int64(f.FiredS * 1000)
				if !f.Fired || seen[ms] {
					continue
				}
				seen[ms] = true
				l, err := plotter.NewLine(plotter.XYs{{X: f.FiredS, Y: 0}, {X: f.FiredS, Y: top}})
				if err != nil {
					continue
				}
				l.LineStyle = lineStyle(0)
				l.LineStyle.Color = color.Gray{Y: 120}
				l.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
				p.Add(l)
				if n == 0 {
					p.addLegend("fault fired", l)
				}
				n++
			}
		}
	}
	return n
}
