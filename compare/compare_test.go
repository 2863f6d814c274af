package compare

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// noise is how much each metric varies from run to run in the synthetic files, as a
// coefficient of variation. The values are at the noisy end of what interleaved rounds show
// on a shared 2-core machine (README: acq/s min–max spans up to 10% over 3 rounds); tails
// vary more than medians.
var noise = map[string]float64{
	"throughput": 0.05,
	"p50":        0.05,
	"p99":        0.10,
	"p999":       0.20,
	"cmds":       0.002,
	"client-cpu": 0.05,
	"redis-cpu":  0.05,
}

// synthRun draws one run of driver around the README's lockcore figures; slowdown 1.25 is 20%
// slower: throughput × 0.8, latencies and CPU × 1.25.
func synthRun(rng *rand.Rand, driver string, round int, slowdown float64) results.Run {
	draw := func(metric string, center float64) float64 {
		// Log-normal: multiplicative noise, never negative, skewed like latencies.
		cv := noise[metric]
		return center * math.Exp(cv*rng.NormFloat64()-cv*cv/2)
	}
	tput := draw("throughput", 88000/slowdown)
	r := results.Run{
		Driver: driver, Round: round, Workload: "contention", Topology: "single", TopologySpec: "single",
		Concurrency: 64, Keys: 10000, KeyDist: "uniform", Seed: 1, WarmupS: 2, DurationS: 5,
		Acquisitions: int64(tput * 5), ThroughputPerS: tput, Complete: true,
		AcquireLatencyUS: results.Percentiles{
			P50: draw("p50", 346*slowdown), P90: 547 * slowdown, P99: draw("p99", 821*slowdown),
			P999: draw("p999", 1421*slowdown), Max: 5255 * slowdown, Mean: 364 * slowdown,
		},
		RedisCommandsPerAcquisition: draw("cmds", 9.02),
		ClientCPUPerAcquisitionUS:   draw("client-cpu", 9.07*slowdown),
		ServerCPUPerAcquisitionUS:   draw("redis-cpu", 9.09*slowdown),
	}
	r.RedisCommands = int64(r.RedisCommandsPerAcquisition * float64(r.Acquisitions))
	return r
}

// synthFile is a result file of rounds interleaved rounds of drivers.
func synthFile(rng *rand.Rand, rounds int, slowdown float64, drivers ...string) *results.File {
	f := results.NewFile("test", []string{"lockbench", "run"})
	f.Host.Hostname = "ci"
	f.RedisVersion = "7.0.15"
	f.Topology = &results.Topology{Kind: "single", Spec: "single", Provider: "native"}
	f.Repeat = rounds
	for round := 1; round <= rounds; round++ {
		for _, d := range drivers {
			f.Runs = append(f.Runs, synthRun(rng, d, round, slowdown))
		}
	}
	return f
}

func compareFiles(t *testing.T, base, new *results.File, opts Options) *Report {
	t.Helper()
	rep, err := Compare([]*results.File{base}, []*results.File{new}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func rowOf(t *testing.T, rep *Report, metric string) Row {
	t.Helper()
	for _, r := range rep.Groups[0].Rows {
		if r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no %s row", metric)
	return Row{}
}

// TestSlowerNewRegresses: NEW 20% slower with 10 runs a side fails the gate in every seeded
// trial, on throughput and the latencies.
func TestSlowerNewRegresses(t *testing.T) {
	const trials, rounds = 100, 10
	missed := 0
	for seed := range uint64(trials) {
		rng := rand.New(rand.NewPCG(seed, 1))
		rep := compareFiles(t, synthFile(rng, rounds, 1, "lockcore"), synthFile(rng, rounds, 1.25, "lockcore"), Options{})
		if rep.Verdict != VerdictRegression || !rep.Failed() {
			missed++
			continue
		}
		if v := rowOf(t, rep, "throughput").Verdict; v != VerdictRegression {
			t.Errorf("seed %d: throughput verdict %s, want regression", seed, v)
		}
	}
	t.Logf("20%% slower, %d+%d runs: detected in %d of %d trials", rounds, rounds, trials-missed, trials)
	if missed > 0 {
		t.Errorf("a 20%% slowdown went undetected in %d of %d trials", missed, trials)
	}
}

// TestNoiseOnlyPasses: BASE and NEW drawn from the same distributions never fail the gate.
// The count of false positives (rows and whole gates) is logged: it is the figure the gate's
// design promises to keep at zero.
func TestNoiseOnlyPasses(t *testing.T) {
	const trials = 500
	for _, rounds := range []int{5, 10, 20} {
		falseGates, falseRows, rows, inconclusive, improved := 0, 0, 0, 0, 0
		for seed := range uint64(trials) {
			rng := rand.New(rand.NewPCG(seed, uint64(rounds)))
			rep := compareFiles(t, synthFile(rng, rounds, 1, "lockcore", "naive"), synthFile(rng, rounds, 1, "lockcore", "naive"), Options{})
			if rep.Failed() {
				falseGates++
			}
			for _, g := range rep.Groups {
				for _, r := range g.Rows {
					rows++
					switch r.Verdict {
					case VerdictRegression:
						falseRows++
						t.Logf("false positive: %d runs, seed %d, %s %s: base %v new %v p %.4f", rounds, seed, g.Driver, r.Metric, r.Base.Center, r.New.Center, r.P)
					case VerdictInconclusive:
						inconclusive++
					case VerdictImproved:
						improved++
					}
				}
			}
		}
		t.Logf("noise only, %d+%d runs, %d trials × 2 drivers: %d failed gates, %d false regression rows of %d, %d inconclusive, %d 'improved'",
			rounds, rounds, trials, falseGates, falseRows, rows, inconclusive, improved)
		if falseGates > 0 {
			t.Errorf("noise only, %d runs a side: the gate failed in %d of %d trials", rounds, falseGates, trials)
		}
	}
}

// TestTooFewRunsFailsClosed: with 3 runs a side, even a 20% slowdown cannot reach p ≤ 0.025
// (two gated rows; the one-sided U test's smallest p for 3+3 is 0.05): the gate fails, naming
// the 4 runs a side that would do; it passes with AllowInconclusive, and fails again with Strict.
func TestTooFewRunsFailsClosed(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	base, new := synthFile(rng, 3, 1, "lockcore"), synthFile(rng, 3, 1.25, "lockcore")
	closed := compareFiles(t, base, new, Options{})
	if !closed.Failed() || closed.Verdict != VerdictTooFewRuns || closed.TooFewRuns != 2 || closed.NeedRuns != 4 {
		t.Errorf("3+3 runs: verdict %s, %d too few, need %d; want too-few-runs, 2, 4", closed.Verdict, closed.TooFewRuns, closed.NeedRuns)
	}
	rep := compareFiles(t, base, new, Options{AllowInconclusive: true})
	if rep.Failed() || rep.Verdict != VerdictPass || rep.Inconclusive == 0 {
		t.Errorf("3+3 runs, AllowInconclusive: verdict %s, %d inconclusive; want pass with inconclusive rows", rep.Verdict, rep.Inconclusive)
	}
	row := rowOf(t, rep, "throughput")
	if row.Verdict != VerdictInconclusive || !strings.Contains(row.Note, "too few runs") {
		t.Errorf("throughput row %s (%s); want inconclusive, too few runs", row.Verdict, row.Note)
	}
	if row.Base.Range != "∞" {
		t.Errorf("3 runs: confidence range %q, want ∞ (benchstat needs 6 for a 95%% interval of the median)", row.Base.Range)
	}
	strict := compareFiles(t, base, new, Options{Strict: true, AllowInconclusive: true})
	if !strict.Failed() || strict.Verdict != VerdictInconclusive {
		t.Errorf("--strict with inconclusive rows: verdict %s, want inconclusive and failed", strict.Verdict)
	}
}

// TestWithinThreshold: a real but small slowdown (2%, below the 5% threshold) that the test
// detects is not a regression.
func TestWithinThreshold(t *testing.T) {
	base := synthFile(rand.New(rand.NewPCG(1, 1)), 20, 1, "lockcore")
	new := synthFile(rand.New(rand.NewPCG(1, 1)), 20, 1, "lockcore")
	for i := range base.Runs {
		// A quiet machine: ±1% spread, and NEW 2% slower than BASE in every run.
		base.Runs[i].ThroughputPerS = 88000 * (1 + 0.001*float64(i-10))
		new.Runs[i].ThroughputPerS = base.Runs[i].ThroughputPerS * 0.98
	}
	rep := compareFiles(t, base, new, Options{})
	row := rowOf(t, rep, "throughput")
	if row.P > rep.RowAlpha {
		t.Fatalf("a systematic 2%% drop should be significant with 20 runs, p = %v", row.P)
	}
	if row.Verdict == VerdictRegression || rep.Failed() {
		t.Errorf("2%% slower with a 5%% threshold: verdict %s; want no regression", row.Verdict)
	}
	// With a 1% threshold it is one.
	rep = compareFiles(t, base, new, Options{MaxRegression: map[string]float64{"throughput": 0.01}})
	if row := rowOf(t, rep, "throughput"); row.Verdict != VerdictRegression || !rep.Failed() {
		t.Errorf("2%% slower with a 1%% threshold: verdict %s; want regression", row.Verdict)
	}
}

func TestViolationsFailRegardless(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	base, new := synthFile(rng, 2, 1, "lockcore"), synthFile(rng, 2, 1, "lockcore")
	new.Runs[1].Violations = 1
	rep := compareFiles(t, base, new, Options{})
	if rep.Verdict != VerdictViolations || !rep.Failed() {
		t.Errorf("a violation in NEW: verdict %s, want violations", rep.Verdict)
	}
	if row := rowOf(t, rep, "violations"); row.Verdict != VerdictViolations || row.New.Center != 1 {
		t.Errorf("violations row %+v", row)
	}
	// A violation in a group only NEW has fails too: it was not compared, but it is not safe.
	base, new = synthFile(rng, 2, 1, "lockcore"), synthFile(rng, 2, 1, "lockcore", "naive")
	new.Runs[1].Violations = 3
	if rep := compareFiles(t, base, new, Options{}); rep.Verdict != VerdictViolations || len(rep.OnlyNew) != 1 {
		t.Errorf("violation in an unmatched group: verdict %s, only in NEW %v", rep.Verdict, rep.OnlyNew)
	}
}

func TestErrorsRegress(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	base, new := synthFile(rng, 8, 1, "lockcore"), synthFile(rng, 8, 1, "lockcore")
	for i := range new.Runs {
		new.Runs[i].Errors = int64(3 + i)
	}
	rep := compareFiles(t, base, new, Options{})
	row := rowOf(t, rep, "errors")
	if row.Verdict != VerdictRegression || row.New.Center != 3*8+28 || row.Delta != nil || row.Gated {
		t.Errorf("errors in every NEW run: %+v; want regression, total 52, no finite delta, not gated", row)
	}
	if rep.Failed() || rep.UngatedRegressions != 1 {
		t.Errorf("errors are reported, not gated by default: failed %v, %d ungated regressions", rep.Failed(), rep.UngatedRegressions)
	}
	if rep := compareFiles(t, base, new, Options{Gate: []string{"throughput", "p99", "errors"}}); !rep.Failed() || rep.Regressions != 1 {
		t.Errorf("errors gated: failed %v, %d regressions; want failed, 1", rep.Failed(), rep.Regressions)
	}
}

func TestWarningsAndUnmatched(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	base, new := synthFile(rng, 2, 1, "lockcore", "redsync"), synthFile(rng, 2, 1, "lockcore", "naive")
	new.Host.Hostname, new.RedisVersion = "other", "7.2.4"
	new.Topology.Provider = "docker"
	new.Runs[0].Complete = false
	rep := compareFiles(t, base, new, Options{})
	all := strings.Join(rep.Warnings, "\n")
	for _, want := range []string{"different hosts", "ci (", "other (", "different Redis versions: BASE 7.0.15, NEW 7.2.4", "different topologies", "NEW has 1 incomplete runs of 4"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q lack %q", all, want)
		}
	}
	if len(rep.Groups) != 1 || len(rep.OnlyBase) != 1 || !strings.HasPrefix(rep.OnlyBase[0], "redsync ") || len(rep.OnlyNew) != 1 || !strings.HasPrefix(rep.OnlyNew[0], "naive ") {
		t.Errorf("groups %d, only base %v, only new %v", len(rep.Groups), rep.OnlyBase, rep.OnlyNew)
	}
}

// TestCaseKeepsGroupsApart: runs of another concurrency are another case, not more samples.
func TestCaseKeepsGroupsApart(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	base, new := synthFile(rng, 2, 1, "lockcore"), synthFile(rng, 2, 1, "lockcore")
	for i := range new.Runs {
		new.Runs[i].Concurrency = 16
	}
	_, err := Compare([]*results.File{base}, []*results.File{new}, Options{})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "nothing in common") && !strings.Contains(err.Error(), "no driver and case in common") {
		t.Errorf("different concurrency: err %v; want nothing in common", err)
	}
}

func TestParseMaxRegression(t *testing.T) {
	got, err := ParseMaxRegression("throughput=5%, p99=12.5%", "acq/s=3%,errors=0%")
	if err != nil {
		t.Fatal(err)
	}
	if got["throughput"] != 0.03 || got["p99"] != 0.125 || got["errors"] != 0 || len(got) != 3 {
		t.Errorf("got %v", got)
	}
	bad := []struct{ in, want string }{
		{"throughput=5", "with its % sign"},
		{"throughput=five%", `"five" is not a number`},
		{"throughput=-5%", "negative"},
		{"p98=5%", `unknown metric "p98"`},
		{"violations=1%", "take no threshold"},
		{"throughput", "want METRIC=PERCENT"},
		{"=5%", "want METRIC=PERCENT"},
	}
	for _, b := range bad {
		_, err := ParseMaxRegression(b.in)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ParseMaxRegression(%q) = %v; want an ErrBadInput containing %q", b.in, err, b.want)
		}
	}
}

func TestMinP(t *testing.T) {
	for _, c := range []struct {
		n1, n2 int
		want   float64
	}{{1, 1, 0.5}, {3, 3, 0.05}, {4, 4, 1.0 / 70}, {5, 5, 1.0 / 252}, {2, 10, 1.0 / 66}, {0, 5, 1}} {
		if got := minP(c.n1, c.n2); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("minP(%d, %d) = %v, want %v", c.n1, c.n2, got, c.want)
		}
	}
}

// TestOneSidedMinP: the one-sided U test, on completely separated samples, gives exactly the
// smallest p minP says, so NeedRuns is right about what the test can reach.
func TestOneSidedMinP(t *testing.T) {
	base := []float64{100, 101, 102, 103, 104}
	new := []float64{80, 81, 82, 83, 84}
	m, _ := results.LookupMetric("throughput")
	if p := worseP(m, base, new); math.Abs(p-minP(5, 5)) > 1e-12 {
		t.Errorf("5+5 separated, NEW lower throughput: p %v, want %v", p, minP(5, 5))
	}
	if p := worseP(m, new, base); p < 0.99 {
		t.Errorf("NEW higher throughput: one-sided p(worse) %v, want ~1", p)
	}
	for alpha, want := range map[float64]int{0.05: 3, 0.025: 4, 0.0125: 5, 0.01: 5, 0.002: 6} {
		if got := NeedRuns(alpha); got != want {
			t.Errorf("NeedRuns(%v) = %d, want %d", alpha, got, want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(8, 8))
	a, b := synthFile(rng, 2, 1, "lockcore"), synthFile(rng, 3, 1, "lockcore")
	b.CreatedAt = a.CreatedAt.Add(time.Hour)
	for _, f := range []*results.File{a, b} {
		if _, err := results.WriteFile(dir, f); err != nil {
			t.Fatal(err)
		}
	}
	files, err := Load(dir)
	if err != nil || len(files) != 2 {
		t.Fatalf("Load(dir) = %d files, %v", len(files), err)
	}
	rep, err := Compare(files[:1], files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g := rep.Groups[0]; g.BaseRuns != 2 || g.NewRuns != 5 {
		t.Errorf("pooled directory: %d+%d runs, want 2+5", g.BaseRuns, g.NewRuns)
	}

	empty := results.NewFile("test", nil)
	emptyDir := t.TempDir()
	emptyPath, _ := results.WriteFile(emptyDir, empty)
	notJSON := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(notJSON, []byte("hello"), 0o644)
	schema2 := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(schema2, []byte(`{"schema": 2, "runs": []}`), 0o644)
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.json"), "no such file"},
		{notJSON, "invalid JSON"},
		{schema2, "schema 2, this lockbench reads schema 1"},
		{emptyPath, "no runs"},
		{t.TempDir(), "no *.json result files"},
	} {
		_, err := Load(c.path)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s) = %v; want an ErrBadInput containing %q", c.path, err, c.want)
		}
	}
}
