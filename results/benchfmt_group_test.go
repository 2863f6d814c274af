package results

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"slices"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// TestBenchstatGroupsAsCompare feeds the runs of a sweep (one driver, steps that differ only in
// target_rate), of two --net settings and of two hold times, each repeated, to WriteBenchfmt
// and reads the lines back with golang.org/x/perf/benchfmt, benchstat's reader: there must be
// one benchmark name per group GroupRuns (what compare matches) makes, with as many samples.
// Before names carried every case field, the 6 sweep steps collapsed into one benchmark.
func TestBenchstatGroupsAsCompare(t *testing.T) {
	base := Run{Driver: "lockcore", Workload: "contention", Topology: "single", Concurrency: 64, Keys: 10000,
		KeyDist: "uniform", Acquisitions: 1000, DurationS: 1, ThroughputPerS: 1000}
	var runs []Run
	for round := 1; round <= 3; round++ {
		for _, rate := range []float64{5000, 10000, 20000, 40000, 80000, 160000} {
			r := base
			r.Round, r.Pacing, r.Arrival, r.TargetRate = round, "open", "uniform", rate
			runs = append(runs, r)
		}
		for _, net := range []string{"", "latency=1ms"} {
			r := base
			r.Round, r.Net = round, net
			runs = append(runs, r)
		}
		r := base
		r.Round, r.HoldUS = round, 1000
		runs = append(runs, r)
	}
	var buf bytes.Buffer
	if err := WriteBenchfmt(&buf, runs); err != nil {
		t.Fatal(err)
	}
	samples := map[string]int{}
	rd := benchfmt.NewReader(&buf, "lockbench.bench.txt")
	for rd.Scan() {
		switch rec := rd.Result(); rec := rec.(type) {
		case *benchfmt.Result:
			samples["Benchmark"+string(rec.Name.Full())]++
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", rec)
		}
	}
	if err := rd.Err(); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	groups := GroupRuns(runs)
	if len(samples) != len(groups) {
		t.Fatalf("benchstat sees %d benchmarks, compare %d groups: %v", len(samples), len(groups), slices.Sorted(maps.Keys(samples)))
	}
	for _, g := range groups {
		name := benchName(&g.Runs[0])
		if samples[name] != len(g.Runs) {
			t.Errorf("benchmark %s has %d samples, compare's group %d runs", name, samples[name], len(g.Runs))
		}
	}
}
