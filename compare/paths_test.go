package compare

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compare/comparetest"
)

// comparePaths runs Paths with opts and writes its report in format.
func comparePaths(t *testing.T, base, new string, opts Options, format string) (*Report, string, error) {
	t.Helper()
	rep, err := Paths(base, new, opts)
	if err != nil {
		return nil, "", err
	}
	var out bytes.Buffer
	if err := rep.WriteFormat(&out, format); err != nil {
		t.Fatal(err)
	}
	return rep, out.String(), nil
}

// The verdicts of `lockbench compare` on files and directories, in each format.
func TestPathsVerdicts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := comparetest.WriteSynthetic(t, filepath.Join(dir, "base"), 1, 10, 1)
	slower := comparetest.WriteSynthetic(t, filepath.Join(dir, "slower"), 2, 10, 0.8)
	same := comparetest.WriteSynthetic(t, filepath.Join(dir, "same"), 3, 10, 1)
	few1 := comparetest.WriteSynthetic(t, filepath.Join(dir, "few1"), 4, 3, 1)
	few2 := comparetest.WriteSynthetic(t, filepath.Join(dir, "few2"), 5, 3, 0.8)
	looser, err := ParseMaxRegression("throughput=30%,p50=30%,p99=30%,p999=50%,client-cpu=30%,redis-cpu=30%")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		base, new string
		opts      Options
		format    string
		failed    bool
		out       string
	}{
		{"20% slower, 10 runs a side", base, slower, Options{}, "text", true, "FAIL: "},
		{"noise only", base, same, Options{}, "text", false, "PASS: no regression"},
		{"directories", filepath.Join(dir, "base"), filepath.Join(dir, "same"), Options{}, "text", false, "PASS"},
		{"3 runs a side: fails closed", few1, few2, Options{}, "text", true, "FAIL: cannot decide: 2 gated rows had too few runs for the test ever to reach p ≤ 0.025; run 4 a side (--repeat 4)"},
		{"3 runs a side, AllowInconclusive", few1, few2, Options{AllowInconclusive: true}, "text", false, "PASS: no regression, but only because --allow-inconclusive"},
		{"3 runs a side, AllowInconclusive and Strict", few1, few2, Options{AllowInconclusive: true, Strict: true}, "text", true, "FAIL (--strict)"},
		{"gate on p50 too", base, slower, Options{Gate: []string{"throughput", "p99", "p50"}}, "text", true, "FAIL: 3 regressions"},
		{"markdown", base, slower, Options{}, "markdown", true, "| acq/s |"},
		{"json", base, slower, Options{}, "json", true, `"verdict": "regression"`},
		{"looser threshold", base, slower, Options{MaxRegression: looser}, "text", false, "PASS"},
	}
	for _, c := range cases {
		rep, out, err := comparePaths(t, c.base, c.new, c.opts, c.format)
		if err != nil || rep.Failed() != c.failed || !strings.Contains(out, c.out) {
			t.Errorf("%s: failed %v, %v:\n%s\nwant failed %v and %q", c.name, rep != nil && rep.Failed(), err, out, c.failed, c.out)
		}
	}
	if _, err := Paths(base, slower, Options{Gate: []string{"max"}}); !errors.Is(err, ErrBadInput) {
		t.Errorf("gate on a metric not compared: %v; want ErrBadInput", err)
	}
}

// TestPathsGateFailsClosed is the case the gate used to miss: 5 runs a side, where the
// two-sided test over 7 rows per driver could never reach significance and a 20% or even 65%
// slowdown passed. Now both fail by default, and noise alone passes in at least 95 of 100
// trials (the gate's alpha is 0.05).
func TestPathsGateFailsClosed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := comparetest.WriteSynthetic(t, filepath.Join(dir, "base"), 1, 5, 1)
	for _, c := range []struct {
		name  string
		speed float64
	}{{"-20%", 0.8}, {"-65%", 0.35}} {
		slower := comparetest.WriteSynthetic(t, filepath.Join(dir, c.name), 2, 5, c.speed)
		if rep, out, err := comparePaths(t, base, slower, Options{}, "text"); err != nil || !rep.Failed() || !strings.Contains(out, "REGRESSION") {
			t.Errorf("%s throughput, 5 runs a side: %v, want a failed gate with a regression:\n%s", c.name, err, out)
		}
	}
	passed := 0
	const trials = 100
	for i := range trials {
		d := filepath.Join(dir, "noise", strconv.Itoa(i))
		b := comparetest.WriteSynthetic(t, filepath.Join(d, "base"), uint64(1000+2*i), 5, 1)
		n := comparetest.WriteSynthetic(t, filepath.Join(d, "new"), uint64(1001+2*i), 5, 1)
		rep, out, err := comparePaths(t, b, n, Options{}, "text")
		switch {
		case err != nil:
			t.Fatalf("noise trial %d: %v", i, err)
		case !rep.Failed():
			passed++
		default:
			t.Logf("noise trial %d failed the gate:\n%s", i, out)
		}
	}
	t.Logf("same vs same, 5 runs a side: %d of %d trials passed", passed, trials)
	if passed < 95 {
		t.Errorf("same vs same passed in %d of %d trials, want at least 95", passed, trials)
	}
}

// Paths says which side it could not load; every error is ErrBadInput.
func TestPathsBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := comparetest.WriteSynthetic(t, filepath.Join(dir, "good"), 1, 2, 1)
	notJSON := filepath.Join(dir, "notjson.json")
	if err := os.WriteFile(notJSON, []byte("lockbench was here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		base, new, want string
	}{
		{filepath.Join(dir, "missing.json"), good, "BASE: stat " + filepath.Join(dir, "missing.json") + ": no such file or directory"},
		{good, notJSON, "NEW: " + notJSON + ": bad result file: invalid JSON"},
	} {
		if _, err := Paths(c.base, c.new, Options{}); !errors.Is(err, ErrBadInput) || err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Paths(%s, %s): %v; want ErrBadInput starting %q", c.base, c.new, err, c.want)
		}
	}
}

func TestCheckFormat(t *testing.T) {
	t.Parallel()
	for _, f := range append(Formats, "md") {
		if err := CheckFormat(f); err != nil {
			t.Errorf("CheckFormat(%q): %v", f, err)
		}
	}
	if err := CheckFormat("html"); !errors.Is(err, ErrBadInput) || err.Error() != `format "html": want text, json, markdown` {
		t.Errorf("CheckFormat(html): %v", err)
	}
}
