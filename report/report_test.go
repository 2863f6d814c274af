package report

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lockbench/lockbench/results"
)

// chartIDs lists the IDs of r's charts in order.
func chartIDs(r *Report) []string {
	var ids []string
	for _, c := range r.Charts {
		ids = append(ids, c.ID)
	}
	return ids
}

func TestBuildDrawsWhatEachFileHolds(t *testing.T) {
	cases := []struct {
		name    string
		sources func(t *testing.T) []Source
		charts  []string
		html    []string // in the page
	}{
		{
			name:    "repeated runs with timelines",
			sources: func(t *testing.T) []Source { return []Source{roundTrip(t, repeatFile(t))} },
			charts:  []string{"spectrum", "rounds", "timeline-throughput", "timeline-p99"},
			html:    []string{"lockcore r3", "naive r2", "3 rounds, interleaved", "127.0.0.1:40001 master", "7.0.15"},
		},
		{
			name:    "interrupted",
			sources: func(t *testing.T) []Source { return []Source{roundTrip(t, incompleteFile(t))} },
			charts:  []string{"spectrum", "timeline-throughput", "timeline-p99"},
			html:    []string{"naive (incomplete)", "redsync (incomplete) measured nothing", "is incomplete", "incomplete naive"},
		},
		{
			name:    "a driver skipped",
			sources: func(t *testing.T) []Source { return []Source{roundTrip(t, skippedFile(t))} },
			charts:  []string{"spectrum", "timeline-throughput", "timeline-p99"},
			html:    []string{"skipped naive", "no read-write lock"},
		},
		{
			name:    "every driver skipped",
			sources: func(t *testing.T) []Source { return []Source{roundTrip(t, emptyFile())} },
			charts:  nil,
			html:    []string{"has no runs (1 skipped)", "skipped naive"},
		},
		{
			name: "sweep",
			sources: func(t *testing.T) []Source {
				return []Source{roundTrip(t, sweepFile(t, results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 2000}))}
			},
			charts: []string{"sweep", "sweep-spectrum-lockcore", "sweep-spectrum-naive"},
			html:   []string{"SLO p99 ≤ 2ms", "lockcore knee: 40000/s", "naive knee: 5000/s", "SLO: acquire p99 at most 2.00ms", "40000/s"},
		},
		{
			name: "sweep with a p99.9 SLO",
			sources: func(t *testing.T) []Source {
				return []Source{roundTrip(t, sweepFile(t, results.SweepSLO{Name: "p999", Percentile: 99.9, LimitUS: 5000}))}
			},
			charts: []string{"sweep", "sweep-spectrum-lockcore", "sweep-spectrum-naive"},
			html:   []string{"SLO p999 ≤ 5ms", "lockcore p999", "acq p999", "saturated: achieved below the target", "stopped early: saturated at 40000/s"},
		},
		{
			name: "sweep with rounds and a refined bracket",
			sources: func(t *testing.T) []Source {
				return []Source{roundTrip(t, roundsSweep(sweepFile(t, results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 2000})))}
			},
			charts: []string{"sweep", "sweep-spectrum-lockcore", "sweep-spectrum-naive"},
			html: []string{"p99 interval", "rounds", "a bar spans the confidence interval", "knee: ≥ 40000/s (ok), &lt; 44000/s (over), 10.0% wide",
				"44000/s (refined)", "projected server-bound capacity", "not one crossing of the SLO (against it: 5000/s (ok)): another sweep may find another knee"},
		},
		{
			name: "several files",
			sources: func(t *testing.T) []Source {
				sources := []Source{roundTrip(t, repeatFile(t)), roundTrip(t, skippedFile(t)),
					roundTrip(t, sweepFile(t, results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 2000}))}
				// Named as by ReadSources, without the time of the test in the names.
				for i, name := range []string{"a/repeat.json", "a/skipped.json", "a/sweep.json"} {
					sources[i].Name = name
				}
				return sources
			},
			// Two sets (the sweep's runs are all steps): bars of lockcore in both.
			charts: []string{"bars-throughput", "spectrum", "sweep", "sweep-spectrum-lockcore", "sweep-spectrum-naive", "rounds", "timeline-throughput", "timeline-p99"},
			html:   []string{"lockcore repeat", "naive repeat", "lockcore skipped", "Configuration: a/repeat.json"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Build(tc.sources(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := chartIDs(r); !slices.Equal(got, tc.charts) {
				t.Errorf("charts %q, want %q", got, tc.charts)
			}
			var page bytes.Buffer
			if err := r.WriteHTML(&page); err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.html {
				if !strings.Contains(page.String(), want) {
					t.Errorf("page lacks %q", want)
				}
			}
			if refs := externalRefs(page.String()); len(refs) > 0 {
				t.Errorf("page refers outside itself: %q", refs)
			}
			if n := strings.Count(page.String(), "<svg"); n != len(tc.charts) {
				t.Errorf("page has %d inline SVGs, want one per chart (%d)", n, len(tc.charts))
			}
		})
	}
}

func TestWriteFilesWritesNonBlankPNGs(t *testing.T) {
	r, err := Build([]Source{roundTrip(t, repeatFile(t)), roundTrip(t, sweepFile(t, results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 2000}))}, Options{Width: 800, Height: 450})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	written, err := r.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 1+len(r.Charts) || written[0] != filepath.Join(dir, HTMLName) {
		t.Fatalf("wrote %q; want %s and one PNG per chart (%d)", written, HTMLName, len(r.Charts))
	}
	for _, path := range written[1:] {
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 450 {
			t.Errorf("%s: %dx%d, want 800x450", filepath.Base(path), b.Dx(), b.Dy())
		}
		ink, colored := inkedPixels(img)
		// Axes, labels and lines; the lines in color. A blank or all-text image has neither.
		if ink < img.Bounds().Dx()*img.Bounds().Dy()/100 || colored < 200 {
			t.Errorf("%s: %d non-white pixels, %d colored: looks blank", filepath.Base(path), ink, colored)
		}
	}
}

// inkedPixels counts the pixels that are not the white background, and among them those in
// color (not gray: text and axes are gray, the data lines are not).
func inkedPixels(img image.Image) (ink, colored int) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			if a == 0 || (r > 245 && g > 245 && bl > 245) {
				continue
			}
			ink++
			if max(r, g, bl)-min(r, g, bl) > 60 {
				colored++
			}
		}
	}
	return ink, colored
}

func TestSpectrumPoints(t *testing.T) {
	h := hdrhistogram.New(results.MinLatencyUS, results.MaxLatencyUS, results.SigFigs)
	for v := int64(1); v <= 1000; v++ {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	xys := spectrum(h)
	for i := 1; i < len(xys); i++ {
		if xys[i].X <= xys[i-1].X || xys[i].Y < xys[i-1].Y {
			t.Fatalf("point %d %v after %v: the spectrum must rise to the right", i, xys[i], xys[i-1])
		}
	}
	if last := xys[len(xys)-1]; last.X != 1000 || last.Y != 1000 {
		t.Errorf("last point %v: want the maximum, 1000µs, at 1/(1-q) = count = 1000", last)
	}
	// On 1..1000 the value at quantile q is about 1000q: check that x = 1/(1-q) holds.
	for _, xy := range xys {
		if xy.X > 500 {
			break
		}
		q := 1 - 1/xy.X
		if want := 1000 * q; xy.Y < want-2 || xy.Y > want+2 {
			t.Errorf("at x %.3g (q %.4f): %vµs, want about %.0fµs", xy.X, q, xy.Y, want)
		}
	}
}

func TestTicks(t *testing.T) {
	var labels []string
	for _, tk := range (percentileTicks{}).Ticks(1, 10000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"0%", "50%", "90%", "99%", "99.9%", "99.99%"}; !slices.Equal(labels, want) {
		t.Errorf("percentile labels %q, want %q", labels, want)
	}
	label := func(min, max float64) []string {
		var out []string
		for _, tk := range (latencyTicks{}).Ticks(min, max) {
			if tk.Label != "" && tk.Value >= min && tk.Value <= max {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	for _, tc := range []struct {
		min, max float64
		want     []string
	}{
		{80, 3000, []string{"100µs", "200µs", "500µs", "1ms", "2ms"}},
		{1, 2e6, []string{"1µs", "10µs", "100µs", "1ms", "10ms", "100ms", "1s"}},
		{600, 900, []string{"600µs", "700µs", "800µs", "900µs"}},
	} {
		if got := label(tc.min, tc.max); !slices.Equal(got, tc.want) {
			t.Errorf("latency labels on %v–%vµs: %q, want %q", tc.min, tc.max, got, tc.want)
		}
	}
}

func TestCheckDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := CheckDir(dir); err != nil {
		t.Fatalf("CheckDir of a new directory: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("CheckDir left %d files behind", len(entries))
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(filepath.Join(file, "sub")); err == nil {
		t.Error("CheckDir under a regular file: no error")
	}
	if err := CheckDir(""); err == nil {
		t.Error("CheckDir(\"\"): no error")
	}
}

// TestChartIDsUnique: drivers whose names differ only in characters unsafe in file names
// still get a PNG each.
func TestChartIDsUnique(t *testing.T) {
	f := newFile(
		fakeRun(t, runSpec{driver: "lockcore:a=1", n: 500, median: 100 * time.Microsecond, tput: 1000, seed: 1, complete: true}),
		fakeRun(t, runSpec{driver: "lockcore:a_1", n: 500, median: 100 * time.Microsecond, tput: 1000, seed: 2, complete: true}))
	f.Sweep = &results.Sweep{Mode: results.SweepConcurrency, Loads: []float64{4}, SLO: results.SweepSLO{Name: "p99", Percentile: 99, LimitUS: 5000},
		Drivers: []results.SweepDriver{
			{Driver: "lockcore:a=1", Steps: []results.SweepStep{{Step: 1, Load: 4, Run: 0, ThroughputPerS: 1000, LatencyUS: 300, Verdict: results.VerdictOK}}},
			{Driver: "lockcore:a_1", Steps: []results.SweepStep{{Step: 1, Load: 4, Run: 1, ThroughputPerS: 1000, LatencyUS: 300, Verdict: results.VerdictOK}}},
		}}
	r, err := Build([]Source{roundTrip(t, f)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sweep", "sweep-spectrum-lockcore_a_1", "sweep-spectrum-lockcore_a_1-2"}
	if got := chartIDs(r); !slices.Equal(got, want) {
		t.Errorf("charts %q, want %q", got, want)
	}
}

// TestInkedPixelsSeesBlank: the blank-image check of the PNG and browser tests tells a white
// image from one with a line of the charts' first color on it.
func TestInkedPixelsSeesBlank(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 100, 50))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	if ink, colored := inkedPixels(img); ink != 0 || colored != 0 {
		t.Errorf("white image: %d ink, %d colored", ink, colored)
	}
	for x := 0; x < 100; x++ {
		img.Set(x, 25, seriesColor(0))
	}
	if ink, colored := inkedPixels(img); ink != 100 || colored != 100 {
		t.Errorf("a line of 100 pixels: %d ink, %d colored", ink, colored)
	}
}

// roundsSweep makes f's sweep one of three rounds a step (every round the step's one run, for
// the fixture), each step with an interval around its percentile, and lockcore's knee
// refined: a step at 44000/s, over, bracketing it with 40000/s.
func roundsSweep(f *results.File) *results.File {
	sw := f.Sweep
	sw.Rounds, sw.MaxRounds, sw.Confidence, sw.IntervalMethod = 3, 6, 0.75, "order statistics"
	for i := range sw.Drivers {
		d := &sw.Drivers[i]
		for j := range d.Steps {
			st := &d.Steps[j]
			st.Runs = []int{st.Run, st.Run, st.Run}
			st.Interval = &results.SweepInterval{LowUS: 0.9 * st.LatencyUS, HighUS: 1.1 * st.LatencyUS, Coverage: 0.75}
		}
		if d.Driver == "lockcore" {
			last := d.Steps[len(d.Steps)-1]
			d.Steps = append(d.Steps, results.SweepStep{Step: len(sw.Loads) + 1, Load: 44000, Refined: true, Run: last.Run, Runs: last.Runs,
				ThroughputPerS: 44000, LatencyUS: 2500, Interval: &results.SweepInterval{LowUS: 2300, HighUS: 2700, Coverage: 0.75}, Verdict: results.VerdictOver})
			d.Knee = &results.KneeBracket{OKStep: d.KneeStep, OKLoad: d.KneeLoad, OverStep: len(sw.Loads) + 1, OverLoad: 44000, OverVerdict: results.VerdictOver,
				Width: 44000/d.KneeLoad - 1, Refined: "within the precision", ProjectedServerCapacityPerS: 95000,
				Crossings: []int{d.Steps[0].Step}} // named, whatever its verdict: the report shows the record
		}
	}
	return f
}
