package report

import (
	"bytes"
	"flag"
	"fmt"
	"image/color"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// demo writes the reports of the fixtures below into a directory, to look at them in a
// browser: go test -run Demo -demo /tmp/i42 ./report.
var demo = flag.String("demo", "", "write the demo reports (grid, base-new) into this directory")

// gridDrivers are the six drivers of lockbench run's comparison, in its order.
var gridDrivers = []string{"lockcore", "redisson", "redsync", "redislock", "rueidislock", "naive"}

// gridSources is a 2-label × 6-driver × 2-topology report's input: per label one file per
// topology, two rounds a driver, with timelines and Redis CPU. NEW (v1.3) is a little faster
// on single and lockcore's cluster runs regress.
func gridSources(t testing.TB, labels ...string) []Source {
	t.Helper()
	var sources []Source
	for li, label := range labels {
		for ti, topo := range []string{"single", "cluster"} {
			var runs []results.Run
			for round := 1; round <= 2; round++ {
				for di, d := range gridDrivers {
					speed := 1 + 0.08*float64(li) - 0.25*float64(ti) - 0.1*float64(di)
					if d == "lockcore" && topo == "cluster" && li == 1 {
						speed -= 0.2
					}
					run := fakeRun(t, runSpec{driver: d, round: round, n: 600, median: time.Duration(float64(120*time.Microsecond) / speed),
						tput: 40000 * speed * (1 + 0.02*float64(round)), timeline: true, seed: uint64(100*li + 10*ti + di + 1000*round), complete: true})
					run.Topology, run.TopologySpec = topo, topo
					run.ServerCPUPerAcquisitionUS = 9 + 3*float64(di) + 4*float64(ti) - float64(li)
					runs = append(runs, run)
				}
			}
			f := newFile(runs...)
			f.Repeat = 2
			src := roundTrip(t, f)
			src.Label = label
			sources = append(sources, src)
		}
	}
	return sources
}

// TestDemo writes the demo reports when -demo is given; it is how the screenshots of
// docs/report.md and the issue were made.
func TestDemo(t *testing.T) {
	if *demo == "" {
		t.Skip("no -demo DIR")
	}
	dir := *demo + "/report-2x6x2"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, gridSources(t, "v1.2", "v1.3"), Options{Title: "lockbench report: v1.2 and v1.3, six drivers on single and cluster"}); err != nil {
		t.Fatal(err)
	}
}

// svgColor is c as gonum's SVG writer spells it, "#4E79A7".
func svgColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// TestOneColorPerDriver: in a 2-label × 6-driver × 2-topology report every driver has a color
// of its own, the same in every chart, and its four variants four line styles; every chart
// that draws a driver draws it in that color, and no two drivers share one.
func TestOneColorPerDriver(t *testing.T) {
	t.Parallel()
	r, err := Build(gridSources(t, "BASE", "NEW"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	color := make(map[string]int)
	style := make(map[[2]int]string)
	for _, g := range r.groups {
		if c, ok := color[g.Driver()]; ok && c != g.color {
			t.Errorf("%s: color %d and %d", g.label, c, g.color)
		}
		color[g.Driver()] = g.color
		k := [2]int{g.color, g.dash}
		if other, ok := style[k]; ok {
			t.Errorf("%s and %s drawn alike (color %d, dash %d)", g.label, other, g.color, g.dash)
		}
		style[k] = g.label
	}
	if len(color) != len(gridDrivers) || len(style) != 4*len(gridDrivers) {
		t.Fatalf("%d colors for %d drivers, %d styles for %d groups", len(color), len(gridDrivers), len(style), len(r.groups))
	}
	colors := make(map[string]string)
	for d, c := range color {
		hex := svgColor(seriesColor(c))
		if other, ok := colors[hex]; ok {
			t.Errorf("%s and %s share color %s", d, other, hex)
		}
		colors[hex] = d
	}
	// The line charts one per topology: 12 lines each, not 24.
	want := []string{"bars-throughput", "bars-redis-cpu", "spectrum-single", "spectrum-cluster", "rounds-single", "rounds-cluster",
		"timeline-throughput-single", "timeline-p99-single", "timeline-throughput-cluster", "timeline-p99-cluster"}
	if got := chartIDs(r); !slices.Equal(got, want) {
		t.Errorf("charts %q, want %q", got, want)
	}
	if title := r.Charts[0].Title; title != "Throughput by driver, label and topology" {
		t.Errorf("bars titled %q: want it to say the bars are labels and topologies", title)
	}
	for _, c := range r.Charts {
		var svg bytes.Buffer
		if err := c.WriteSVG(&svg); err != nil {
			t.Fatal(err)
		}
		for hex, d := range colors {
			if !strings.Contains(svg.String(), hex) {
				t.Errorf("%s: no %s in %s's color %s", c.ID, d, c.ID, hex)
			}
		}
	}
}

// TestLegendsShortAndBeside: a legend names a series by driver and what differs (label,
// topology), never by a file name, and sits beside the plot: the data's axes end where the
// data do, not raised to make room for a legend over them.
func TestLegendsShortAndBeside(t *testing.T) {
	t.Parallel()
	r, err := Build(gridSources(t, "v1.2", "v1.3"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Charts {
		if len(c.plot.legend) == 0 {
			t.Errorf("%s: no legend", c.ID)
		}
		for _, e := range c.plot.legend {
			if len(e.name) > 28 || strings.ContainsAny(e.name, "/\\") || strings.Contains(e.name, ".json") || strings.Contains(e.name, "contention") {
				t.Errorf("%s: legend entry %q: want driver and what differs, short", c.ID, e.name)
			}
		}
	}
	// One spectrum per topology, its lines named by driver and label, the topology in its
	// title.
	for _, topo := range []string{"single", "cluster"} {
		spectrum := r.Charts[slices.Index(chartIDs(r), "spectrum-"+topo)]
		if want := "Acquire latency by percentile: " + topo; spectrum.Title != want || spectrum.plot.Title.Text != want {
			t.Errorf("spectrum of %s titled %q (plot %q), want %q", topo, spectrum.Title, spectrum.plot.Title.Text, want)
		}
		names := make([]string, 0, len(spectrum.plot.legend))
		for _, e := range spectrum.plot.legend {
			names = append(names, e.name)
		}
		if len(names) != 2*len(gridDrivers) {
			t.Errorf("spectrum of %s: %d lines %q, want 2 labels × %d drivers", topo, len(names), names, len(gridDrivers))
		}
		for _, want := range []string{"lockcore v1.2", "naive v1.3", "rueidislock v1.2"} {
			if !slices.Contains(names, want) {
				t.Errorf("spectrum of %s: legend %q lacks %q", topo, names, want)
			}
		}
	}
	// The legend's columns start right of the plot area and inside the chart, also for the
	// many entries of the timelines.
	for _, c := range r.Charts {
		area, cols, _ := c.layout(draw.New(vgimg.New(c.width, c.height)))
		for i, col := range cols {
			if col.Min.X < area.Max.X || col.Min.X >= col.Max.X || col.Max.Y > c.height {
				t.Errorf("%s: legend column %d at %v, plot area %v", c.ID, i, col.Rectangle, area.Rectangle)
			}
		}
		if area.Max.X-area.Min.X < c.width/2 {
			t.Errorf("%s: plot area %v of a chart %v wide", c.ID, area.Rectangle, c.width)
		}
	}
}

// TestDemoSweep writes a sweep's report when -demo is given.
func TestDemoSweep(t *testing.T) {
	if *demo == "" {
		t.Skip("no -demo DIR")
	}
	dir := *demo + "/report-sweep"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, []Source{roundTrip(t, sweepFile(t, results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 1000}))}, Options{}); err != nil {
		t.Fatal(err)
	}
}

// TestSetsWithoutRunsNameNothing: a sweep's file beside a run's adds no set to name (its runs
// are all steps, drawn in the sweep charts), so the run's lines stay named by driver alone and
// no bars are drawn.
func TestSetsWithoutRunsNameNothing(t *testing.T) {
	t.Parallel()
	r, err := Build([]Source{{Name: "run.json", File: repeatFile(t)},
		{Name: "sweep.json", File: sweepFile(t, results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 2000})}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range r.groups {
		if g.label != g.Driver() {
			t.Errorf("group labelled %q, want %q", g.label, g.Driver())
		}
	}
	if slices.Contains(chartIDs(r), "bars-throughput") {
		t.Errorf("charts %q: bars of one set", chartIDs(r))
	}
}

// TestBarsAndRowsSideBySide: the bars and summary rows a reader compares, one driver's v1.2
// and v1.3 on one topology, are neighbours; a half-bar gap parts the topologies, and the
// shade says the label.
func TestBarsAndRowsSideBySide(t *testing.T) {
	t.Parallel()
	r, err := Build(gridSources(t, "v1.2", "v1.3"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lay := r.barLayout()
	want := map[string]float64{"v1.2 single": 0, "v1.3 single": 1, "v1.2 cluster": 2.5, "v1.3 cluster": 3.5}
	for v, pos := range want {
		if lay.pos[v] != pos {
			t.Errorf("bar %q at %g, want %g (positions %v)", v, lay.pos[v], pos, lay.pos)
		}
	}
	if lay.span != 4.5 || lay.shades != 2 || !slices.Equal(lay.legend, []string{"v1.2", "v1.3"}) ||
		lay.shade["v1.3 single"] != 1 || lay.shade["v1.2 cluster"] != 0 {
		t.Errorf("span %g, shades %d %v, legend %q: want 4.5, a shade per label", lay.span, lay.shades, lay.shade, lay.legend)
	}
	if want := "single (v1.2, v1.3), then cluster (v1.2, v1.3)"; lay.order != want {
		t.Errorf("caption's order %q, want %q", lay.order, want)
	}
	var rows []string
	for _, row := range r.summaryTable().Rows[:5] {
		rows = append(rows, row[0])
	}
	if want := []string{"lockcore v1.2 single", "lockcore v1.3 single", "lockcore v1.2 cluster", "lockcore v1.3 cluster", "redisson v1.2 single"}; !slices.Equal(rows, want) {
		t.Errorf("summary rows %q, want %q", rows, want)
	}
	// One label, two topologies: each topology its own shade, no gap.
	r, err = Build(gridSources(t, "v1.2"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lay = r.barLayout()
	if lay.pos["single"] != 0 || lay.pos["cluster"] != 1.5 || lay.shades != 2 || lay.order != "" || !slices.Equal(lay.legend, []string{"single", "cluster"}) {
		t.Errorf("one label: positions %v shades %d legend %q order %q", lay.pos, lay.shades, lay.legend, lay.order)
	}
}
