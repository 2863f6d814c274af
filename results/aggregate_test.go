package results

import (
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{3, 1}, 2},
		{[]float64{5, 1, 3}, 3},
		{[]float64{10, 1, 2, 1000}, 6},
		{[]float64{2, 2, 2, 9}, 2},
	}
	for _, tt := range tests {
		in := append([]float64(nil), tt.xs...)
		if got := Median(tt.xs); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.xs[i] {
				t.Fatalf("Median modified its input: %v, was %v", tt.xs, in)
			}
		}
	}
}

// rep is a measured repetition with the figures the groups look at.
func rep(driver string, round int, tput, p99, cmds, cpu float64) Run {
	return Run{
		Driver: driver, Workload: "contention", Topology: "single", Concurrency: 8, Keys: 100, Round: round,
		Acquisitions: int64(tput), ThroughputPerS: tput, Complete: true,
		AcquireLatencyUS:            Percentiles{P50: p99 / 2, P99: p99, P999: 2 * p99},
		RedisCommandsPerAcquisition: cmds, ClientCPUPerAcquisitionUS: cpu, ServerCPUPerAcquisitionUS: cpu / 2,
	}
}

func TestGroupRuns(t *testing.T) {
	failed := Run{Driver: "a", Workload: "contention", Topology: "single", Concurrency: 8, Keys: 100, Round: 4, Errors: 9, Incomplete: "connection refused"}
	other := rep("a", 1, 50, 1, 1, 1)
	other.Concurrency = 16 // another case: its own group
	runs := []Run{
		rep("a", 1, 100, 10, 3, 0), // cpu unmeasured in this round
		rep("b", 1, 400, 40, 2, 4),
		rep("b", 2, 200, 20, 2, 6),
		rep("a", 2, 300, 30, 5, 8),
		rep("a", 3, 200, 90, 4, 10),
		failed,
		other,
	}
	runs[4].Violations = 2
	groups := GroupRuns(runs)
	if len(groups) != 3 {
		t.Fatalf("%d groups, want 3 (a, b, a at conc 16)", len(groups))
	}
	a, b := groups[0], groups[1]
	tests := []struct {
		name      string
		got, want float64
	}{
		{"a runs", float64(len(a.Runs)), 4},
		{"a measured", float64(a.Measured), 3},
		{"a acq/s median", a.ThroughputPerS, 200},
		{"a acq/s min", a.MinThroughputPerS, 100},
		{"a acq/s max", a.MaxThroughputPerS, 300},
		{"a p50 median", a.AcquireP50US, 15},
		{"a p99 median", a.AcquireP99US, 30},
		{"a p999 median", a.AcquireP999US, 60},
		{"a cmds/acq median", a.CommandsPerAcquisition, 4},
		{"a client cpu/acq median of the two measured", a.ClientCPUPerAcquisitionUS, 9},
		{"a server cpu/acq median", a.ServerCPUPerAcquisitionUS, 4.5},
		{"a errors summed", float64(a.Errors), 9},
		{"a violations summed", float64(a.Violations), 2},
		{"a acquisitions summed", float64(a.Acquisitions), 600},
		{"a incomplete", float64(a.Incomplete), 1},
		{"b acq/s median of two", b.ThroughputPerS, 300},
		{"b p99 median of two", b.AcquireP99US, 30},
		{"b incomplete", float64(b.Incomplete), 0},
		{"other group alone", float64(len(groups[2].Runs)), 1},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if a.Driver() != "a" || b.Driver() != "b" {
		t.Errorf("group order %s, %s; want first appearance a, b", a.Driver(), b.Driver())
	}
}

func TestRatios(t *testing.T) {
	runs := []Run{
		rep("a", 1, 100, 10, 3, 0),
		rep("b", 1, 300, 5, 2, 0),
		rep("c", 1, 50, 40, 2, 0),
		rep("c", 2, 150, 40, 2, 0),
		rep("b", 2, 100, 5, 2, 0),
		rep("a", 2, 200, 10, 3, 0),
	}
	noA := rep("b", 1, 500, 10, 2, 0)
	noA.Topology = "cluster" // a case the baseline did not run
	unmeasured := Run{Driver: "d", Workload: "contention", Topology: "single", Concurrency: 8, Keys: 100}
	runs = append(runs, noA, rep("c", 1, 250, 0, 2, 0), unmeasured)
	runs[len(runs)-2].Topology = "cluster"

	type want struct {
		driver, base       string
		tput, p99          float64
		paired             int
		roundMin, roundMax float64
	}
	tests := []struct {
		name     string
		baseline string
		want     []want
	}{
		{"default baseline is the first driver", "", []want{
			{"b", "a", 200.0 / 150, 0.5, 2, 0.5, 3},
			{"c", "a", 100.0 / 150, 4, 2, 0.5, 0.75},
			{"c", "b", 0.5, 0, 1, 0.5, 0.5}, // cluster: falls back to the first measured group; p99 unmeasured
		}},
		{"named baseline", "b", []want{
			{"a", "b", 150.0 / 200, 2, 2, 1.0 / 3, 2},
			{"c", "b", 100.0 / 200, 8, 2, 1.0 / 6, 1.5},
			{"c", "b", 0.5, 0, 1, 0.5, 0.5},
		}},
		{"baseline that never ran", "zzz", []want{
			{"b", "a", 200.0 / 150, 0.5, 2, 0.5, 3},
			{"c", "a", 100.0 / 150, 4, 2, 0.5, 0.75},
			{"c", "b", 0.5, 0, 1, 0.5, 0.5},
		}},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, tt := range tests {
		ratios := Ratios(GroupRuns(runs), tt.baseline)
		if len(ratios) != len(tt.want) {
			t.Errorf("%s: %d ratios, want %d", tt.name, len(ratios), len(tt.want))
			continue
		}
		for i, w := range tt.want {
			r := ratios[i]
			if r.Group.Driver() != w.driver || r.Base.Driver() != w.base || !near(r.Throughput, w.tput) || !near(r.P99, w.p99) ||
				r.Paired != w.paired || !near(r.RoundMin, w.roundMin) || !near(r.RoundMax, w.roundMax) {
				t.Errorf("%s: ratio %d = %s/%s %.3fx p99 %.3fx paired %d %.3f–%.3f; want %+v", tt.name, i,
					r.Group.Driver(), r.Base.Driver(), r.Throughput, r.P99, r.Paired, r.RoundMin, r.RoundMax, w)
			}
		}
	}
}

// TestGroupAggregatesEveryField checks the fields beyond the headline medians: the fencing and
// reader figures, errors and commands by kind, and the medians of every percentile.
func TestGroupAggregatesEveryField(t *testing.T) {
	a := rep("fenced", 1, 100, 10, 3, 2)
	a.FencingViolations, a.Violations, a.MaxConcurrentReaders = 2, 3, 4
	a.ErrorsByKind, a.Errors = map[string]int64{"acquire": 1}, 1
	a.RedisCommands, a.RedisCommandsByName = 30, map[string]int64{"evalsha": 20, "publish": 10}
	a.ReleaseLatencyUS = Percentiles{P99: 7, Max: 70}
	a.DurationS, a.ClientCPUUS, a.ServerCPUUS = 1, 200, 100
	b := rep("fenced", 2, 300, 30, 3, 2)
	b.FencingViolations, b.Violations, b.MaxConcurrentReaders = 1, 1, 9
	b.ErrorsByKind, b.Errors = map[string]int64{"acquire": 2, "release": 5}, 7
	b.RedisCommands, b.RedisCommandsByName = 90, map[string]int64{"evalsha": 90}
	b.ReleaseLatencyUS = Percentiles{P99: 9, Max: 90}
	b.DurationS, b.ClientCPUUS, b.ServerCPUUS = 1, 600, 300
	g := GroupRuns([]Run{a, b})
	if len(g) != 1 {
		t.Fatalf("%d groups, want 1", len(g))
	}
	x := g[0]
	checks := []struct {
		name      string
		got, want float64
	}{
		{"fencing violations summed", float64(x.FencingViolations), 3},
		{"violations summed", float64(x.Violations), 4},
		{"max concurrent readers is the max", float64(x.MaxConcurrentReaders), 9},
		{"errors by kind acquire", float64(x.ErrorsByKind["acquire"]), 3},
		{"errors by kind release", float64(x.ErrorsByKind["release"]), 5},
		{"commands summed", float64(x.RedisCommands), 120},
		{"evalsha summed", float64(x.RedisCommandsByName["evalsha"]), 110},
		{"publish summed", float64(x.RedisCommandsByName["publish"]), 10},
		{"release p99 median", x.ReleaseLatencyUS.P99, 8},
		{"release max median", x.ReleaseLatencyUS.Max, 80},
		{"acquire p99 median", x.AcquireLatencyUS.P99, 20},
		{"duration summed", x.DurationS, 2},
		{"client cpu summed", x.ClientCPUUS, 800},
		{"server cpu summed", x.ServerCPUUS, 400},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// The metric table agrees with the group's own aggregation.
	for _, name := range []string{"throughput", "p99", "fencing-violations", "errors"} {
		m, _ := LookupMetric(name)
		v, ok := x.Value(m)
		var want float64
		switch name {
		case "throughput":
			want = x.ThroughputPerS
		case "p99":
			want = x.AcquireP99US
		case "fencing-violations":
			want = float64(x.FencingViolations)
		case "errors":
			want = float64(x.Errors)
		}
		if !ok || v != want {
			t.Errorf("Value(%s) = %v, %v; want %v", name, v, ok, want)
		}
	}
}

func TestCase(t *testing.T) {
	r := rep("a", 1, 100, 10, 3, 0)
	r.KeyDist, r.HoldUS = "zipf", 1000
	got := r.Case().String()
	want := "workload=contention topology=single concurrency=8 keys=100 key_dist=zipf hold_us=1000"
	if got != want {
		t.Errorf("Case() = %q, want %q", got, want)
	}
	r.TopologySpec = "masters:5"
	if v := r.Case().Get("topology"); v != "masters:5" {
		t.Errorf("topology label %q, want the spec masters:5", v)
	}
	// Seed, round, driver and measurements do not make another case.
	s := r
	s.Seed, s.Round, s.Driver, s.ThroughputPerS = 99, 7, "b", 1
	if r.Case().String() != s.Case().String() {
		t.Errorf("case changed with seed/round/driver/measurement: %q vs %q", r.Case(), s.Case())
	}
}
