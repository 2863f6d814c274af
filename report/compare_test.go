package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compare"
	"github.com/lockbench/lockbench/results"
)

// baseNewFiles are BASE and NEW of six drivers on single, six rounds a side: NEW's lockcore
// is 30% slower (a regression), its naive 15% faster, the others alike.
func baseNewFiles(t testing.TB) (base, new *results.File) {
	t.Helper()
	side := func(label int) *results.File {
		var runs []results.Run
		for round := 1; round <= 6; round++ {
			for di, d := range gridDrivers {
				speed := 1 - 0.1*float64(di)
				switch {
				case label == 1 && d == "lockcore":
					speed *= 0.7
				case label == 1 && d == "naive":
					speed *= 1.15
				}
				jitter := 1 + 0.01*float64((round*7+di*3+label*5)%5)
				run := fakeRun(t, runSpec{driver: d, round: round, n: 500, median: time.Duration(float64(120*time.Microsecond) / speed),
					tput: 40000 * speed * jitter, seed: uint64(1000*label + 10*round + di), complete: true})
				run.ServerCPUPerAcquisitionUS = (9 + 3*float64(di)) / speed * jitter
				runs = append(runs, run)
			}
		}
		f := newFile(runs...)
		f.Repeat = 6
		return roundTrip(t, f).File
	}
	return side(0), side(1)
}

// TestComparePage: the BASE/NEW page shows compare's verdict, a row per driver and metric
// with BASE's and NEW's medians and the verdict (lockcore's throughput a regression, naive's
// an improvement), compare's warnings, and charts of both sides labelled BASE and NEW.
func TestComparePage(t *testing.T) {
	t.Parallel()
	base, nw := baseNewFiles(t)
	nw.RedisVersion = "7.2.4" // a warning compare gives
	cmp, err := compare.Compare([]*results.File{base}, []*results.File{nw}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Verdict != compare.VerdictRegression || len(cmp.Warnings) == 0 {
		t.Fatalf("fixture: verdict %s, warnings %q; want a regression and a warning", cmp.Verdict, cmp.Warnings)
	}
	dir := t.TempDir()
	written, err := WriteCompare(dir, []*results.File{base}, []*results.File{nw}, cmp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) < 3 || written[0] != filepath.Join(dir, HTMLName) {
		t.Fatalf("written %q", written)
	}
	data, err := os.ReadFile(written[0])
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	for _, want := range []string{
		"<h2>BASE and NEW</h2>", `<p class="verdict fail">FAIL: 2 regressions; 2 regressions in metrics reported but not gated`,
		"<td>lockcore</td><td>acq/s</td>", `<td class="v-regression">regression`,
		"<td>naive</td><td>acq/s</td>", `<td class="v-improved">improved`,
		"Warning: " + cmp.Warnings[0],
		"lockcore BASE", "lockcore NEW", "Throughput by driver and label",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Each side's lockcore median, as compare computed it, is on the page.
	for _, g := range cmp.Groups {
		if g.Driver != "lockcore" {
			continue
		}
		for _, row := range g.Rows {
			if row.Metric == "throughput" {
				m, _ := results.LookupMetric("throughput")
				for _, v := range []float64{row.Base.Center, row.New.Center} {
					if !strings.Contains(page, m.Format(v)) {
						t.Errorf("page lacks lockcore's median %s", m.Format(v))
					}
				}
			}
		}
	}
	if refs := externalRefs(page); len(refs) > 0 {
		t.Errorf("page refers outside itself: %q", refs)
	}
	// Without a comparison, the labelled report alone.
	r, err := BuildCompare([]*results.File{base}, []*results.File{nw}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "BASE and NEW</h2>") || !strings.Contains(buf.String(), "lockcore NEW") {
		t.Errorf("page without a comparison: want the labelled report alone")
	}
}

// TestDemoCompare writes the BASE/NEW page when -demo is given.
func TestDemoCompare(t *testing.T) {
	if *demo == "" {
		t.Skip("no -demo DIR")
	}
	base, nw := baseNewFiles(t)
	cmp, err := compare.Compare([]*results.File{base}, []*results.File{nw}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := *demo + "/report-base-new"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteCompare(dir, []*results.File{base}, []*results.File{nw}, cmp, Options{}); err != nil {
		t.Fatal(err)
	}
}

// The page of two paths: BASE and NEW read as compare reads them, the title naming both; a path
// that is not a result file is an error, and nothing is written.
func TestComparePaths(t *testing.T) {
	t.Parallel()
	base, nw := baseNewFiles(t)
	in := t.TempDir()
	basePath, newPath := filepath.Join(in, "base.json"), filepath.Join(in, "new.json")
	for p, f := range map[string]*results.File{basePath: base, newPath: nw} {
		if err := results.WriteFileAt(p, f); err != nil {
			t.Fatal(err)
		}
	}
	cmp, err := compare.Paths(basePath, newPath, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	written, err := WriteComparePaths(dir, basePath, newPath, cmp)
	if err != nil || len(written) < 3 || written[0] != filepath.Join(dir, HTMLName) {
		t.Fatalf("written %q, %v", written, err)
	}
	page, err := os.ReadFile(written[0])
	if want := "lockbench compare: BASE " + basePath + ", NEW " + newPath; err != nil || !strings.Contains(string(page), want) {
		t.Errorf("page (%v) lacks the title %q", err, want)
	}
	empty := t.TempDir()
	if written, err := WriteComparePaths(empty, basePath, filepath.Join(in, "missing.json"), cmp); err == nil || len(written) != 0 {
		t.Errorf("a missing NEW: written %q, %v; want an error and nothing written", written, err)
	}
}
