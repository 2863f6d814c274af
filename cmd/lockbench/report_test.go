package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
)

func TestReportBadInput(t *testing.T) {
	t.Parallel()
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"no -o", []string{"report", "testdata/old-run.json"}, "-o DIR is required"},
		{"no file", []string{"report", "-o", out}, "want at least one result file"},
		{"missing file", []string{"report", "-o", out, "testdata/no-such.json"}, "no such file"},
		{"not a result", []string{"report", "-o", out, "testdata/not-a-result.json"}, "testdata/not-a-result.json: bad result file: missing schema (not a lockbench result file?)"},
		{"newer schema", []string{"report", "-o", out, "testdata/old-run.json", "testdata/schema-2.json"}, "testdata/schema-2.json: bad result file: schema 2, this lockbench reads schema 1"},
		// The directory is checked first: a typo in -o is reported before any file is read.
		{"unwritable -o", []string{"report", "-o", filepath.Join(notDir, "sub"), "testdata/not-a-result.json"}, "cannot write there"},
		{"bad flag", []string{"report", "--width", "3"}, "unknown flag"},
		{"run --report unwritable", []string{"run", "--report", filepath.Join(notDir, "sub")}, "--report " + filepath.Join(notDir, "sub") + ": cannot write there"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := dispatch(tc.args, &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), tc.msg) {
				t.Errorf("lockbench %q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), exitUsage, tc.msg)
			}
		})
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("bad input wrote %d files into -o", len(entries))
	}
}

func TestReportHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"report", "--help"}, {"help", "report"}} {
		var stdout, stderr bytes.Buffer
		if code := dispatch(args, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "Usage: lockbench report -o DIR") {
			t.Errorf("lockbench %q: exit %d, stdout %q", args, code, stdout.String())
		}
	}
}

// pngs lists the PNG files in dir.
func pngs(t *testing.T, dir string) []string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	slices.Sort(names)
	return names
}

// TestReportOnOlderResult reports on a result file of an earlier run of this version, from
// before timelines, topologies and rounds were recorded: the spectrum and the tables, no more.
func TestReportOnOlderResult(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new", "dir")
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"report", "-o", dir, "testdata/old-run.json"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := filepath.Join(dir, report.HTMLName) + "\n" + filepath.Join(dir, "spectrum.png") + "\n"
	if stdout.String() != want {
		t.Errorf("stdout %q, want the paths written %q", stdout.String(), want)
	}
	page, err := os.ReadFile(filepath.Join(dir, report.HTMLName))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"lockcore", "naive", "7.0.15", "--concurrency 16"} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("page lacks %q", s)
		}
	}
}

// TestRunReportAndReport runs lockbench with --repeat and --report on a private redis-server,
// then lockbench report on the result file it wrote: both draw the same charts.
func TestRunReportAndReport(t *testing.T) {
	t.Parallel()
	dir, rep := t.TempDir(), filepath.Join(t.TempDir(), "report")
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore,naive", "--repeat", "2", "--concurrency", "8", "--keys", "100",
		"--duration", "1s", "--warmup", "100ms", "--out", dir, "--report", rep)
	if code, _ := finish(t, cmd, errb); code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, errb)
	}
	// 1 s runs have one timeline interval: no timeline chart, a note saying why instead
	// (report draws a timeline from three intervals on; its own tests draw them).
	want := []string{"rounds.png", "spectrum.png"}
	if got := pngs(t, rep); !slices.Equal(got, want) {
		t.Errorf("run --report wrote %q, want %q", got, want)
	}
	if !strings.Contains(errb.String(), "report: "+filepath.Join(rep, report.HTMLName)+" (and 2 PNG charts)") {
		t.Errorf("stderr does not name the report:\n%s", errb)
	}
	if page, err := os.ReadFile(filepath.Join(rep, report.HTMLName)); err != nil || !strings.Contains(string(page), "No timeline drawn for") {
		t.Errorf("the page does not say why it has no timeline (%v)", err)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	again := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := dispatch(append([]string{"report", "-o", again}, paths...), &stdout, &stderr); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr.String())
	}
	if got := pngs(t, again); !slices.Equal(got, want) {
		t.Errorf("report wrote %q, want %q", got, want)
	}
	assertServerGone(t, errb.String())
}

// TestRunReportSkippedDriver: naive has no read-write lock and is skipped; the report draws
// lockcore and lists the skip with its reason.
func TestRunReportSkippedDriver(t *testing.T) {
	t.Parallel()
	dir, rep := t.TempDir(), t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--workload", "rw", "--driver", "lockcore,naive", "--concurrency", "4", "--keys", "20",
		"--duration", "500ms", "--warmup", "0s", "--out", dir, "--report", rep)
	if code, _ := finish(t, cmd, errb); code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, errb)
	}
	page, err := os.ReadFile(filepath.Join(rep, report.HTMLName))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"skipped naive", "needs rw locks", "spectrum"} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("page lacks %q", s)
		}
	}
	assertServerGone(t, errb.String())
}

// TestCtrlCWritesReport interrupts a run with --report: what was measured is drawn, marked
// incomplete, and lockbench report draws the incomplete result file as well.
func TestCtrlCWritesReport(t *testing.T) {
	t.Parallel()
	dir, rep := t.TempDir(), t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore,naive", "--concurrency", "8", "--keys", "100",
		"--duration", "60s", "--warmup", "100ms", "--out", dir, "--report", rep)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errb.String(), "[1/2]") {
		if time.Now().After(deadline) {
			t.Fatalf("run did not start:\n%s", errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // past the warm-up, a second into the measured phase
	interruptRun(t, cmd, errb)
	page, err := os.ReadFile(filepath.Join(rep, report.HTMLName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("lockcore (incomplete)")) || !bytes.Contains(page, []byte("is incomplete")) {
		t.Errorf("the report of an interrupted run does not say so")
	}
	if got := pngs(t, rep); !slices.Contains(got, "spectrum.png") {
		t.Errorf("report of the interrupted run: %q, want a spectrum", got)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var stdout, stderr bytes.Buffer
	if code := dispatch(append([]string{"report", "-o", t.TempDir()}, paths...), &stdout, &stderr); code != exitOK {
		t.Fatalf("report on the incomplete result: exit %d: %s", code, stderr.String())
	}
	assertServerGone(t, errb.String())
}

// TestSweepReport runs a short rate sweep with --report, then lockbench report on its result
// file: both draw the sweep chart and each driver's spectrum per step.
func TestSweepReport(t *testing.T) {
	t.Parallel()
	dir, rep := t.TempDir(), t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "sweep", "--driver", "lockcore,naive", "--rates", "200,400", "--keys", "100",
		"--duration", "400ms", "--warmup", "0s", "--slo", "p99=500ms", "--out", dir, "--report", rep,
		"--rounds", "1", "--noise-floor", "0") // one run a step: the report of rounds has tests of its own
	// The SLO is loose so that both steps run: a step over it ends the driver's sweep, and a
	// loaded CI machine once had 200/s over 50 ms.
	if code, out := finish(t, cmd, errb); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	want := []string{"sweep-spectrum-lockcore.png", "sweep-spectrum-naive.png", "sweep.png"}
	if got := pngs(t, rep); !slices.Equal(got, want) {
		t.Errorf("sweep --report wrote %q, want %q", got, want)
	}
	page, err := os.ReadFile(filepath.Join(rep, report.HTMLName))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Sweep steps", "SLO: acquire p99 at most 500ms", "200/s", "400/s", "SLO p99 ≤ 500ms"} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("page lacks %q", s)
		}
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	again := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := dispatch(append([]string{"report", "-o", again}, paths...), &stdout, &stderr); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr.String())
	}
	if got := pngs(t, again); !slices.Equal(got, want) {
		t.Errorf("report of the sweep wrote %q, want %q", got, want)
	}
	assertServerGone(t, errb.String())
}

// TestReportLabels: --label NAME=PATH and a NAME=PATH argument name the files' series, and two
// labels draw the grouped bars.
func TestReportLabels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"report", "-o", dir, "--label", "v1.2=testdata/old-run.json", "v1.3=testdata/old-run.json"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	page, err := os.ReadFile(filepath.Join(dir, report.HTMLName))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"lockcore v1.2", "lockcore v1.3", "by driver and label"} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("page lacks %q", s)
		}
	}
	if !strings.Contains(stdout.String(), "bars-throughput.png") {
		t.Errorf("no grouped bars written: %s", stdout.String())
	}
}
