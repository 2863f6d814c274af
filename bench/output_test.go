package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

// A session's result goes to the files lockbench run writes (result, benchstat lines, HDR
// percentiles and logs) and its summary names every driver.
func TestWriteFilesAndSummary(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	res, err := Run(t.Context(), tg, Spec{Drivers: []string{"naive", "lockcore"}, Config: short(), Topology: "single"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep := &lines{}
	if err := WriteFiles(dir, res.File, rep); err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"*.json", "*.bench.txt", "*.hgrm", "*.hlog"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) == 0 {
			t.Errorf("no %s in %s (lines: %s)", pattern, dir, rep)
		}
	}
	bench, _ := filepath.Glob(filepath.Join(dir, "*.bench.txt"))
	if b, err := os.ReadFile(bench[0]); err != nil || !strings.Contains(string(b), "acq/s") {
		t.Errorf("benchstat lines %q (%v); want acq/s", b, err)
	}
	var out bytes.Buffer
	if err := WriteSummary(&out, res.File.Runs, "naive"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"naive", "lockcore", "checkers"} {
		if !strings.Contains(out.String(), d) {
			t.Errorf("summary lacks %q:\n%s", d, out.String())
		}
	}
}

// The file records what the session ran against; a topology lockbench started gets no warning
// about keeping locks, which its private servers are not for.
func TestDescribe(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	file := &results.File{}
	rep := &lines{}
	Describe(t.Context(), tg, file, 8, rep)
	if file.RedisVersion == "" || file.Topology == nil || file.Deployment == nil || len(file.Deployment.Nodes) != 1 {
		t.Errorf("version %q, topology %+v, deployment %+v; want the server described", file.RedisVersion, file.Topology, file.Deployment)
	}
	if rep.String() != "" {
		t.Errorf("lines %q for a started topology; want none", rep)
	}
}

// Outputs write the result files and the report of a file that holds runs, say where they went,
// and write nothing for a file that holds nothing (a session interrupted before its first run).
func TestOutputsWrite(t *testing.T) {
	t.Parallel()
	res, err := Run(t.Context(), openSingle(t), Spec{Drivers: []string{"naive"}, Config: short(), Topology: "single"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	file := res.File
	dir, page := t.TempDir(), t.TempDir()
	rep := &lines{}
	if err := (Outputs{Dir: dir, Report: page}).Write(file, rep); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(m) != 1 {
		t.Errorf("result files %q, want one", m)
	}
	if _, err := os.Stat(filepath.Join(page, report.HTMLName)); err != nil {
		t.Errorf("no report page: %v", err)
	}
	if s := rep.String(); !strings.Contains(s, "results: ") || !strings.Contains(s, "report: "+filepath.Join(page, report.HTMLName)+" (and ") {
		t.Errorf("lines %q: want where the results and the report went", s)
	}

	empty, none := t.TempDir(), filepath.Join(t.TempDir(), "report")
	if err := (Outputs{Dir: empty, Report: none}).Write(&results.File{}, rep); err != nil {
		t.Fatal(err)
	}
	if m, _ := os.ReadDir(empty); len(m) != 0 {
		t.Errorf("an empty file wrote %d files", len(m))
	}
	if _, err := os.Stat(none); err == nil {
		t.Error("an empty file drew a report")
	}

	// Results that cannot be written say so, and no report is drawn.
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = (Outputs{Dir: filepath.Join(blocked, "sub"), Report: none}).Write(file, rep)
	if err == nil || !strings.HasPrefix(err.Error(), "writing results: ") {
		t.Errorf("results under a file: %v; want writing results: …", err)
	}
	if _, err := os.Stat(none); err == nil {
		t.Error("a report drawn after the results failed")
	}
	if err := (Outputs{Report: filepath.Join(blocked, "sub")}).Write(file, rep); err == nil || !strings.HasPrefix(err.Error(), "report: ") {
		t.Errorf("report under a file: %v; want report: …", err)
	}
}
