package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
	"gonum.org/v1/plot/vg/draw"
)

// TestSweepMarksVerdicts: each step of a sweep is marked by its verdict's shape (ok, over,
// saturated apart), in its driver's color, and the legend names every verdict drawn.
func TestSweepMarksVerdicts(t *testing.T) {
	t.Parallel()
	f := sweepFile(t, results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 1000})
	want := make(map[string]int) // verdict: steps
	for _, d := range f.Sweep.Drivers {
		for _, st := range d.Steps {
			want[st.Verdict]++
		}
	}
	for _, v := range []string{results.VerdictOK, results.VerdictOver, results.VerdictSaturated} {
		if want[v] == 0 {
			t.Fatalf("the fixture has no %s step: %v", v, want)
		}
	}
	r, err := Build([]Source{roundTrip(t, f)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Charts[slices.Index(chartIDs(r), "sweep")]
	got := c.plot.marked
	for v, n := range want {
		if got[v] != n {
			t.Errorf("%d steps marked %s, want %d", got[v], v, n)
		}
	}
	var legend []string
	for _, e := range c.plot.legend {
		legend = append(legend, e.name)
	}
	for _, w := range []string{"step ok: within the SLO", "step over: p99 above the SLO", "step saturated: load not achieved"} {
		if !slices.Contains(legend, w) {
			t.Errorf("legend %q lacks %q", legend, w)
		}
	}
	shapes := make(map[draw.GlyphDrawer]string)
	for _, v := range verdictOrder {
		if other, ok := shapes[verdictGlyph(v, nil).Shape]; ok {
			t.Errorf("%s and %s share a shape", v, other)
		}
		shapes[verdictGlyph(v, nil).Shape] = v
	}
}

// TestShortRunsTimelineNote: runs of one timeline interval (lockbench run --duration 1s) draw
// no blank timeline; the page says why, and for which runs. A file without timelines is said
// too.
func TestShortRunsTimelineNote(t *testing.T) {
	t.Parallel()
	short := func(driver string, seed uint64) results.Run {
		r := fakeRun(t, runSpec{driver: driver, n: 500, median: 100 * time.Microsecond, tput: 40000, timeline: true, seed: seed, complete: true})
		pt := r.Timeline.Points[0]
		pt.StartS, pt.DurationS = 0, 1.02
		r.Timeline.IntervalS, r.Timeline.Points, r.DurationS = 1, []results.TimelinePoint{pt}, 1.02
		return r
	}
	r, err := Build([]Source{roundTrip(t, newFile(short("lockcore", 1), short("naive", 2)))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ids := chartIDs(r); slices.Contains(ids, "timeline-throughput") || slices.Contains(ids, "timeline-p99") {
		t.Errorf("charts %q: a timeline of runs of one interval is blank", ids)
	}
	var page bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"No timeline drawn for lockcore and naive", "lasted 1.02s", "three of its 1s intervals", "run for 3s or more (--duration)"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %q; notes: %q", want, r.Notes)
		}
	}
	// With one long run beside the short one, the chart is drawn and the note names the
	// short one only.
	long := fakeRun(t, runSpec{driver: "redsync", n: 2000, median: 100 * time.Microsecond, tput: 40000, timeline: true, seed: 3, complete: true})
	r, err = Build([]Source{roundTrip(t, newFile(short("lockcore", 1), long))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(chartIDs(r), "timeline-throughput") {
		t.Errorf("charts %q: want the long run's timeline", chartIDs(r))
	}
	if notes := strings.Join(r.Notes, "\n"); !strings.Contains(notes, "No timeline drawn for lockcore:") || strings.Contains(notes, "redsync") {
		t.Errorf("notes %q: want lockcore's, not redsync's", r.Notes)
	}
}
