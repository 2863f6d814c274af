package gobench_test

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/lockbench/lockbench/workloads"
)

// out is where the result file goes; by default a directory the test removes when it ends.
// Keep the file with: go test -run TestLockBenchmark ./examples/gobench -args -out "$PWD/results"
// (go test runs the test in the package's directory: a relative path is taken from there).
var out = flag.String("out", "", "directory for the result file (default: a temporary one)")

// rounds is how many times each driver runs, interleaved. lockbench compare needs 5 a side
// before its statistical test can call a difference a regression: -args -rounds 5.
var rounds = flag.Int("rounds", 1, "runs per driver, interleaved")

// benchDrivers are the drivers compared, in drivers.Parse syntax ("lockcore:handoff=0" takes
// options); the first is the one under test, the second its baseline.
var benchDrivers = []string{"lockcore", "redisson"}

// benchThresholds gate the run: a ratio between two drivers measured side by side holds on a
// loaded machine where an absolute figure would not, and no amount of speed excuses two
// holders of one lock at once.
var benchThresholds = []string{
	"lockcore/redisson throughput>=1",
	"violations==0",
	"errors==0",
}

// TestLockBenchmark starts a redis-server, runs the contention workload on each driver for a
// second with bench.Run (as lockbench run does), checks the thresholds and writes the result
// file.
func TestLockBenchmark(t *testing.T) {
	if *rounds < 1 {
		t.Fatalf("-rounds %d: want at least 1", *rounds)
	}
	// Parsed before anything runs, so that a typo fails at once.
	ths := make([]thresholds.Threshold, len(benchThresholds))
	for i, expr := range benchThresholds {
		var err error
		if ths[i], err = thresholds.Parse(expr); err != nil {
			t.Fatal(err)
		}
	}
	// Bounds the whole test: a server that stops answering fails it instead of hanging.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// The zero Spec starts one native redis-server (from PATH) on a free loopback port.
	// Close stops it and everything Open started.
	tgt, err := target.Open(ctx, target.Spec{Log: t.Logf})
	if err != nil {
		t.Fatalf("%v (redis-server must be on PATH)", err)
	}
	defer tgt.Close()

	spec := bench.Spec{
		Drivers: benchDrivers,
		Config: workloads.Config{ // lockbench run's --concurrency, --keys, --duration, --warmup
			Concurrency: 16,
			Keys:        1000,
			Duration:    time.Second,
			Warmup:      200 * time.Millisecond,
		},
		Repeat:     *rounds,
		Topology:   tgt.Info().Spec,
		Thresholds: ths,
		// lockbench run's default --stall-threshold: a server that leaves a PING unanswered
		// this long during a phase fails the run, rather than passing with what it measured.
		StallThreshold: 2 * time.Second,
	}
	// The file's header is the caller's: what lockbench run records about the deployment.
	file := results.NewFile("gobench", []string{"go", "test", "-run", t.Name()})
	file.RedisVersion = tgt.RedisVersion(ctx)
	file.Topology = tgt.Info()
	file.Deployment = tgt.Deployment(ctx, spec.Config.Concurrency)

	// Every driver, every round, drivers in rotated order; each run from a clean keyspace,
	// audited afterwards; thresholds checked at the end.
	res, err := bench.Run(ctx, tgt, spec, bench.Options{File: file, Reporter: logReporter{t}})
	if err != nil {
		t.Fatal(err) // a spec or workload configuration that cannot run at all
	}
	for _, run := range file.Runs {
		t.Logf("%s round %d: %.0f acq/s, acquire p99 %.0f µs, %.2f Redis commands per acquisition, %d errors, %d violations",
			run.Driver, run.Round, run.ThroughputPerS, run.AcquireLatencyUS.P99, run.RedisCommandsPerAcquisition, run.Errors, run.Violations)
	}
	var report strings.Builder
	if err := thresholds.WriteReport(&report, res.Thresholds); err != nil {
		t.Fatal(err)
	}
	t.Log(report.String())
	if res.Failed {
		t.Errorf("a run failed (the log says why): lockbench run would exit 1")
	}
	if res.ThresholdsFailed > 0 {
		t.Errorf("%d of %d thresholds failed", res.ThresholdsFailed, len(res.Thresholds))
	}

	dir := *out
	if dir == "" {
		dir = t.TempDir()
	}
	path, err := results.WriteFile(dir, file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("results: %s (lockbench report %[1]s; lockbench compare BASE %[1]s)", path)
	checkResultFile(t, path, ths)
}

// logReporter is a bench.Reporter that logs the session's lines with t.Logf and leaves out the
// per-second progress, which a terminal shows and a test log does not need.
type logReporter struct{ t *testing.T }

func (r logReporter) Line(format string, a ...any) { r.t.Logf(format, a...) }
func (logReporter) Progress(workloads.Progress)    {}
func (logReporter) SetRound(round, rounds int)     {}
func (logReporter) Clear()                         {}

// checkResultFile reads the file back as lockbench report and compare do, and checks that it
// holds both drivers' runs, their histograms, and the thresholds' verdicts of the run.
func checkResultFile(t *testing.T, path string, ths []thresholds.Threshold) {
	t.Helper()
	f, err := results.ReadFile(path) // validates the schema and decodes every histogram
	if err != nil {
		t.Fatal(err)
	}
	if f.Schema != results.SchemaVersion || !f.Complete || f.Topology == nil || f.Topology.Provider != target.ProviderNative {
		t.Errorf("file: schema %d, complete %v, topology %+v; want schema %d, complete, a native topology",
			f.Schema, f.Complete, f.Topology, results.SchemaVersion)
	}
	if len(f.Runs) != *rounds*len(benchDrivers) || f.Repeat != *rounds {
		t.Fatalf("file has %d runs of %d rounds, want %d per driver %v", len(f.Runs), f.Repeat, *rounds, benchDrivers)
	}
	for i, run := range f.Runs {
		acquire, _, _, err := run.Histograms.Decode()
		order := bench.RoundOrder(benchDrivers, run.Round-1)
		switch {
		case err != nil:
			t.Errorf("run %d: %v", i, err)
		case run.Driver != order[i%len(benchDrivers)]:
			t.Errorf("run %d (round %d) is %s's, want the order %v", i, run.Round, run.Driver, order)
		case run.Acquisitions == 0 || acquire.TotalCount() != run.Acquisitions:
			t.Errorf("%s: %d acquisitions, %d in the acquire histogram; want the same, not 0",
				run.Driver, run.Acquisitions, acquire.TotalCount())
		case run.RedisCommands == 0:
			t.Errorf("%s: no Redis commands counted: the server statistics were not read", run.Driver)
		}
	}
	// The file alone gives the same verdicts: a later compare sees what this run saw.
	if n := thresholds.Failed(thresholds.Check(ths, f.Runs)); n > 0 {
		t.Errorf("%d thresholds fail on the file read back", n)
	}
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(m.Run())
}
