package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compare/comparetest"
	"github.com/lockbench/lockbench/results"
)

// How lockbench compare maps the verdicts of compare.Paths (tested in package compare) to exit
// codes and output.
func TestCompareCommandVerdicts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := comparetest.WriteSynthetic(t, filepath.Join(dir, "base"), 1, 10, 1)
	slower := comparetest.WriteSynthetic(t, filepath.Join(dir, "slower"), 2, 10, 0.8)
	same := comparetest.WriteSynthetic(t, filepath.Join(dir, "same"), 3, 10, 1)
	few1 := comparetest.WriteSynthetic(t, filepath.Join(dir, "few1"), 4, 3, 1)
	few2 := comparetest.WriteSynthetic(t, filepath.Join(dir, "few2"), 5, 3, 0.8)
	cases := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"20% slower, 10 runs a side", []string{base, slower}, exitFailure, "FAIL: "},
		{"noise only", []string{base, same}, exitOK, "PASS: no regression"},
		{"3 runs a side, --allow-inconclusive", []string{"--allow-inconclusive", few1, few2}, exitOK, "PASS: no regression, but only because --allow-inconclusive"},
		{"3 runs a side, --allow-inconclusive --strict", []string{"--allow-inconclusive", "--strict", few1, few2}, exitFailure, "FAIL (--strict)"},
		{"gate on p50 too", []string{"--gate", "throughput,p99,p50", base, slower}, exitFailure, "FAIL: 3 regressions"},
		{"gate on a metric not compared", []string{"--gate", "max", base, slower}, exitUsage, ""},
		{"markdown", []string{"--format", "markdown", base, slower}, exitFailure, "| acq/s |"},
		{"looser threshold", []string{"--max-regression", "throughput=30%,p50=30%,p99=30%,p999=50%,client-cpu=30%,redis-cpu=30%", base, slower}, exitOK, "PASS"},
		{"a BASE/NEW page", []string{"--report", filepath.Join(dir, "page"), base, slower}, exitFailure, "FAIL: "},
		{"an unwritable page", []string{"--report", "/proc/lockbench-page", base, slower}, exitUsage, ""},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := dispatch(append([]string{"compare"}, c.args...), &out, &errb)
		if code != c.code || !strings.Contains(out.String(), c.out) {
			t.Errorf("%s: exit %d, stdout:\n%s\nstderr: %s\nwant exit %d and %q", c.name, code, out.String(), errb.String(), c.code, c.out)
		}
	}
	// compare --report: the page holds compare's verdict, and its paths went to stderr.
	page, err := os.ReadFile(filepath.Join(dir, "page", "index.html"))
	if err != nil || !strings.Contains(string(page), "regression") || !strings.Contains(string(page), "BASE") {
		t.Errorf("compare --report's page: %v, want the verdicts and the BASE/NEW labels", err)
	}
}

func TestCompareCommandBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := comparetest.WriteSynthetic(t, filepath.Join(dir, "good"), 1, 2, 1)
	notJSON := filepath.Join(dir, "notjson.json")
	os.WriteFile(notJSON, []byte("lockbench was here\n"), 0o644)
	schema2 := filepath.Join(dir, "schema2.json")
	os.WriteFile(schema2, []byte(`{"schema": 2, "tool": "lockbench", "runs": [{"driver": "x"}]}`), 0o644)
	emptyPath, err := results.WriteFile(filepath.Join(dir, "empty"), results.NewFile("test", nil))
	if err != nil {
		t.Fatal(err)
	}
	other := results.NewFile("test", nil)
	other.Runs = []results.Run{{Driver: "naive", Workload: "rw", Topology: "cluster", Concurrency: 1, Keys: 1, Acquisitions: 1, ThroughputPerS: 1}}
	otherPath, err := results.WriteFile(filepath.Join(dir, "other"), other)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(dir, "missing.json"), good}, "BASE: stat " + filepath.Join(dir, "missing.json") + ": no such file or directory"},
		{[]string{good, notJSON}, "NEW: " + notJSON + ": bad result file: invalid JSON"},
		{[]string{schema2, good}, "schema 2, this lockbench reads schema 1"},
		{[]string{good, emptyPath}, "no runs"},
		{[]string{good, filepath.Join(dir, "empty", "..", "nothing-here")}, "no such file"},
		{[]string{good, otherPath}, "no driver and case in common"},
		{[]string{"--max-regression", "p98=5%", good, good}, `unknown metric "p98"`},
		{[]string{"--max-regression", "throughput=5", good, good}, "with its % sign"},
		{[]string{"--max-regression", "throughput=-2%", good, good}, "negative"},
		{[]string{"--max-regression", "violations=1%", good, good}, "take no threshold"},
		{[]string{"--alpha", "1.5", good, good}, "--alpha 1.5"},
		{[]string{"--format", "html", good, good}, `--format "html"`},
		{[]string{good}, "want two arguments"},
		{[]string{"--bogus", good, good}, "unknown flag"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := dispatch(append([]string{"compare"}, c.args...), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) || out.Len() != 0 {
			t.Errorf("compare %q: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, stderr containing %q", c.args, code, out.String(), errb.String(), c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{notJSON}, "invalid JSON"},
		{[]string{schema2}, "schema 2"},
		{[]string{emptyPath}, "no runs"},
		{nil, "want at least one result file"},
	} {
		var out, errb bytes.Buffer
		code := dispatch(append([]string{"export", "--out", t.TempDir()}, c.args...), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) || out.Len() != 0 {
			t.Errorf("export %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out.String(), errb.String(), c.want)
		}
	}
	var out bytes.Buffer
	if code := dispatch([]string{"compare", "--help"}, &out, new(bytes.Buffer)); code != exitOK || !strings.Contains(out.String(), "throughput=5%") {
		t.Errorf("compare --help: exit %d, %q", code, out.String())
	}
}

// TestCompareEndToEnd: two real lockbench runs (BASE and NEW, the same configuration), then
// lockbench compare on their result directories, and benchstat on their .bench.txt files.
func TestCompareEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, side := range []string{"base", "new"} {
		errb := &syncBuffer{}
		cmd := lockbench(t, errb, "run", "--driver", "lockcore,naive", "--repeat", "2", "--concurrency", "4", "--keys", "100",
			"--duration", "500ms", "--warmup", "100ms", "--out", filepath.Join(dir, side))
		if err := cmd.Wait(); err != nil {
			t.Fatalf("lockbench run (%s): %v\n%s", side, err, errb)
		}
		assertServerGone(t, errb.String())
	}
	// 2 runs a side can never be significant: the gate fails closed and names the runs needed.
	var out, errb bytes.Buffer
	code := dispatch([]string{"compare", filepath.Join(dir, "base"), filepath.Join(dir, "new")}, &out, &errb)
	if code != exitFailure || !strings.Contains(out.String(), "FAIL: cannot decide") || !strings.Contains(out.String(), "(--repeat 5)") {
		t.Fatalf("compare of 2+2 runs: exit %d, want %d naming --repeat 5\n%s%s", code, exitFailure, out.String(), errb.String())
	}
	out.Reset()
	code = dispatch([]string{"compare", "--allow-inconclusive", filepath.Join(dir, "base"), filepath.Join(dir, "new")}, &out, &errb)
	if code != exitOK {
		t.Fatalf("compare --allow-inconclusive of two runs of one configuration: exit %d\n%s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"lockbench compare: PASS", "lockcore contention/single/concurrency=4/keys=100", "naive contention/single",
		"acq/s", "INCONCLUSIVE (too few runs: 2 can never reach"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("compare output lacks %q:\n%s", want, out.String())
		}
	}

	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Log("go not on PATH: benchstat not checked")
		return
	}
	bin := filepath.Join(t.TempDir(), "benchstat")
	if b, err := exec.Command(goCmd, "build", "-o", bin, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		t.Fatalf("go build benchstat: %v\n%s", err, b)
	}
	base, _ := filepath.Glob(filepath.Join(dir, "base", "*.bench.txt"))
	new, _ := filepath.Glob(filepath.Join(dir, "new", "*.bench.txt"))
	bs, err := exec.Command(bin, base[0], new[0]).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, bs)
	}
	for _, want := range []string{"acq/s", "p99-us", "cmds/acq", "driver=lockcore", "driver=naive", "vs base"} {
		if !strings.Contains(string(bs), want) {
			t.Errorf("benchstat output lacks %q:\n%s", want, bs)
		}
	}
}
