// Package comparetest writes synthetic result files for the tests of lockbench compare and of
// package compare: runs whose figures scatter like real rounds, around a chosen speed.
package comparetest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// WriteSynthetic writes a result file of rounds runs of lockcore whose figures vary by 5%
// (latency tails more) around speed × the README's, drawn from seed, into dir, and returns its
// path. The same seed gives the same file.
func WriteSynthetic(t testing.TB, dir string, seed uint64, rounds int, speed float64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 42))
	draw := func(center, cv float64) float64 { return center * math.Exp(cv*rng.NormFloat64()-cv*cv/2) }
	f := results.NewFile("test", []string{"lockbench", "run"})
	f.Topology = &results.Topology{Kind: "single", Spec: "single", Provider: "native"}
	for round := 1; round <= rounds; round++ {
		tput := draw(88000*speed, 0.05)
		f.Runs = append(f.Runs, results.Run{
			Driver: "lockcore", Round: round, Workload: "contention", Topology: "single", TopologySpec: "single",
			Concurrency: 64, Keys: 10000, KeyDist: "uniform", DurationS: 5, Complete: true,
			Acquisitions: int64(5 * tput), ThroughputPerS: tput,
			AcquireLatencyUS:            results.Percentiles{P50: draw(346/speed, 0.05), P99: draw(821/speed, 0.1), P999: draw(1421/speed, 0.2)},
			RedisCommandsPerAcquisition: 9.02, ClientCPUPerAcquisitionUS: draw(9/speed, 0.05), ServerCPUPerAcquisitionUS: draw(9/speed, 0.05),
		})
	}
	path, err := results.WriteFile(dir, f)
	if err != nil {
		t.Fatal(err)
	}
	return path
}
