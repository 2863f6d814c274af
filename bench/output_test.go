package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
