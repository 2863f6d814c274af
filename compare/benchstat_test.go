package compare

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// benchstat builds golang.org/x/perf/cmd/benchstat (the version go.mod pins) into a temporary
// directory, or skips when the go command is not at hand.
func benchstat(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("go not on PATH: cannot build benchstat")
		}
		t.Skip("go not on PATH: cannot build benchstat")
	}
	bin := filepath.Join(t.TempDir(), "benchstat")
	out, err := exec.Command(goCmd, "build", "-o", bin, "golang.org/x/perf/cmd/benchstat").CombinedOutput()
	if err != nil {
		t.Fatalf("go build benchstat: %v\n%s", err, out)
	}
	return bin
}

// TestBenchstatAgrees: benchstat reads the .bench.txt lines of BASE and NEW and sees the same
// changes, in the same direction, as compare.
func TestBenchstatAgrees(t *testing.T) {
	bin := benchstat(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 11))
	base, new := synthFile(rng, 10, 1, "lockcore"), synthFile(rng, 10, 1.25, "lockcore")
	paths := map[string]*results.File{filepath.Join(dir, "base.bench.txt"): base, filepath.Join(dir, "new.bench.txt"): new}
	for p, f := range paths {
		var buf bytes.Buffer
		if err := results.WriteBenchfmt(&buf, f.Runs); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(bin, "-format", "csv", filepath.Join(dir, "base.bench.txt"), filepath.Join(dir, "new.bench.txt")).Output()
	if err != nil {
		t.Fatalf("benchstat: %v", err)
	}
	deltas := benchstatDeltas(t, out)
	rep := compareFiles(t, base, new, Options{})
	// benchstat unit → compare metric.
	for unit, metric := range map[string]string{"acq/s": "throughput", "p50-us": "p50", "p99-us": "p99", "client-us/acq": "client-cpu", "redis-us/acq": "redis-cpu"} {
		d, ok := deltas[unit]
		if !ok {
			t.Errorf("benchstat printed no %s row:\n%s", unit, out)
			continue
		}
		row := rowOf(t, rep, metric)
		if row.Delta == nil {
			t.Errorf("%s: compare has no delta", metric)
			continue
		}
		t.Logf("%-14s benchstat %8s   compare %+.2f%% (%s)", unit, d, 100**row.Delta, row.Verdict)
		if d == "~" {
			if row.Verdict == VerdictRegression {
				t.Errorf("%s: benchstat sees no significant change, compare a regression", unit)
			}
			continue
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(d, "%"), 64)
		if err != nil {
			t.Fatalf("%s: benchstat delta %q", unit, d)
		}
		if (pct < 0) != (*row.Delta < 0) {
			t.Errorf("%s: benchstat %s, compare %+.2f%%: opposite directions", unit, d, 100**row.Delta)
		}
	}
	if d := deltas["acq/s"]; !strings.HasPrefix(d, "-") {
		t.Errorf("benchstat acq/s delta %q; want a significant drop for a 20%% slower NEW", d)
	}
	if rowOf(t, rep, "throughput").Verdict != VerdictRegression {
		t.Errorf("compare does not call the 20%% slower throughput a regression")
	}
}

// benchstatDeltas reads benchstat's CSV: for each unit's table, the vs-base column of its
// single benchmark row.
func benchstatDeltas(t *testing.T, out []byte) map[string]string {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(out))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("benchstat CSV: %v\n%s", err, out)
	}
	deltas := make(map[string]string)
	unit := ""
	for _, rec := range recs {
		switch {
		case len(rec) == 0 || rec[0] == "":
			// A header row: its unit is the second cell ("", "sec/op", "CI", …).
			if len(rec) > 1 {
				unit = rec[1]
			}
		case strings.HasPrefix(rec[0], "Lock/") && len(rec) >= 6:
			deltas[unit] = rec[5]
		}
	}
	return deltas
}
