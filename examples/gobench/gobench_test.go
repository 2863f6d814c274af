package gobench_test

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
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

// benchDrivers run one after the other, each on a keyspace emptied before it; the first is the
// one under test, the second its baseline.
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
// second, checks the thresholds and writes the result file.
func TestLockBenchmark(t *testing.T) {
	if *rounds < 1 {
		t.Fatalf("-rounds %d: want at least 1", *rounds)
	}
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

	file := results.NewFile("gobench", []string{"go", "test", "-run", t.Name()})
	file.RedisVersion = tgt.RedisVersion(ctx)
	file.Topology = tgt.Info()
	cfg := workloads.Config{
		Concurrency: 16,
		Keys:        1000,
		Duration:    time.Second,
		Warmup:      200 * time.Millisecond,
	}
	file.Deployment = tgt.Deployment(ctx, cfg.Concurrency)
	w, err := workloads.Get("contention")
	if err != nil {
		t.Fatal(err)
	}
	file.Repeat = *rounds
	for round := 1; round <= *rounds; round++ {
		for _, name := range roundOrder(benchDrivers, round) {
			// A lock left by the previous driver would make this one wait for its lease.
			if _, err := tgt.Clean(ctx, workloads.DefaultKeyPrefix, nil); err != nil {
				t.Fatal(err)
			}
			drv, err := drivers.Parse(name) // "lockcore:handoff=0" and the like take options
			if err != nil {
				t.Fatal(err)
			}
			run, err := workloads.Run(ctx, workloads.Plan{
				Workload:    w,
				Config:      cfg,
				Driver:      drv,
				Target:      tgt.DriverConfig(0), // 0: each driver's default lease
				ServerStats: tgt.ServerStats,     // commands and Redis CPU per acquisition
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			run.Round = round // report and compare pair the drivers of one round
			run.TopologySpec = file.Topology.Spec
			t.Logf("%s: %.0f acq/s, acquire p99 %.0f µs, %.2f Redis commands per acquisition, %d errors, %d violations",
				name, run.ThroughputPerS, run.AcquireLatencyUS.P99, run.RedisCommandsPerAcquisition, run.Errors, run.Violations)
			file.Complete = file.Complete && run.Complete
			file.Runs = append(file.Runs, run)
		}
	}

	var report strings.Builder
	checked := thresholds.Check(ths, file.Runs)
	if err := thresholds.WriteReport(&report, checked); err != nil {
		t.Fatal(err)
	}
	t.Log(report.String())
	if n := thresholds.Failed(checked); n > 0 {
		t.Errorf("%d of %d thresholds failed", n, len(checked))
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
	if len(f.Runs) != *rounds*len(benchDrivers) {
		t.Fatalf("file has %d runs, want %d per driver %v", len(f.Runs), *rounds, benchDrivers)
	}
	for i, run := range f.Runs {
		acquire, _, _, err := run.Histograms.Decode()
		switch {
		case err != nil:
			t.Errorf("run %d: %v", i, err)
		case run.Driver != roundOrder(benchDrivers, run.Round)[i%len(benchDrivers)]:
			t.Errorf("run %d (round %d) is %s's, want the order %v", i, run.Round, run.Driver, roundOrder(benchDrivers, run.Round))
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

// roundOrder is the drivers in the order round (1-based) runs them, rotated by one each round
// as lockbench run --repeat does, so that no driver always runs first on a cold server.
func roundOrder(names []string, round int) []string {
	n := len(names)
	out := make([]string, n)
	for i := range out {
		out[i] = names[(i+round-1)%n]
	}
	return out
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(m.Run())
}
