package results

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestCapacityProjectsFromTheBusiestMaster(t *testing.T) {
	r := Run{Driver: "lockcore", Workload: "contention", Topology: "cluster", Complete: true,
		DurationS: 4, Acquisitions: 40000, ThroughputPerS: 10000,
		Nodes: []NodeResult{
			{Addr: "a", Role: RoleMaster, CPUUS: 2e6},  // 50% busy
			{Addr: "b", Role: RoleMaster, CPUUS: 1e6},  // 25%
			{Addr: "r", Role: RoleReplica, CPUUS: 3e6}, // replicas do not serve locks
		}}
	r.setRatios()
	c := r.Capacity
	if c == nil {
		t.Fatal("no capacity")
	}
	if c.Busiest != "a" || !near(c.Utilization, 0.5) || !near(c.ProjectedPerS, 20000) || len(c.Masters) != 2 {
		t.Errorf("capacity %+v; want busiest a at 50%%, 20000/s, 2 masters", c)
	}
	if m := c.Masters[1]; m.Addr != "b" || !near(m.CPUPerAcquisitionUS, 25) || !near(m.ProjectedPerS, 40000) {
		t.Errorf("master b %+v; want 25 µs/acq, 40000/s", m)
	}
	// One master: the projection is 1 / (CPU per acquisition).
	one := Run{DurationS: 2, Acquisitions: 20000, ThroughputPerS: 10000, Nodes: []NodeResult{{Addr: "s", CPUUS: 1e5}}}
	one.setRatios()
	if c := one.Capacity; c == nil || !near(c.ProjectedPerS, 1e6/(1e5/20000)) {
		t.Errorf("single master capacity %+v; want %v/s", c, 1e6/(1e5/20000))
	}
}

func TestNoCapacityWithoutServerCPU(t *testing.T) {
	for name, r := range map[string]Run{
		"no nodes":     {DurationS: 1, Acquisitions: 10, ThroughputPerS: 10},
		"idle server":  {DurationS: 10, Acquisitions: 10, ThroughputPerS: 1, Nodes: []NodeResult{{Addr: "s", CPUUS: 1000}}},
		"nothing done": {DurationS: 1, Nodes: []NodeResult{{Addr: "s", CPUUS: 5e5}}},
	} {
		r.setRatios()
		if r.Capacity != nil {
			t.Errorf("%s: capacity %+v; want none", name, r.Capacity)
		}
	}
}

func TestSummaryShowsCapacity(t *testing.T) {
	runs := []Run{
		{Driver: "lockcore", Workload: "contention", Topology: "single", Complete: true, DurationS: 1, Acquisitions: 50000, ThroughputPerS: 50000,
			Nodes: []NodeResult{{Addr: "s", Role: RoleMaster, CPUUS: 4e5}}},
		{Driver: "naive", Workload: "contention", Topology: "single", Complete: true, DurationS: 1, Acquisitions: 1000, ThroughputPerS: 1000,
			Nodes: []NodeResult{{Addr: "s", Role: RoleMaster, CPUUS: 5e4}}},
	}
	for i := range runs {
		runs[i].setRatios()
	}
	var buf bytes.Buffer
	if err := WriteSummaryBaseline(&buf, runs, "naive"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"server-bound capacity", "projected acq/s", "40%", "125000", "(rough: Redis was under 10% busy)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestMedianProjection(t *testing.T) {
	a, b, c := &Run{Capacity: &Capacity{ProjectedPerS: 10}}, &Run{}, &Run{Capacity: &Capacity{ProjectedPerS: 30}}
	if got := MedianProjection([]*Run{a, b, c, nil}); got != 20 {
		t.Errorf("MedianProjection = %v, want 20 (the runs without one left out)", got)
	}
	if got := MedianProjection([]*Run{b}); got != 0 {
		t.Errorf("MedianProjection of runs without one = %v, want 0", got)
	}
}

// TestSummaryNotesMastersSharingAHost checks the note under a projection over several masters:
// a cluster whose masters share one host (a local cluster: their cores are shared) gets it,
// with the number of servers; one whose masters are on different hosts, and a single server,
// do not.
func TestSummaryNotesMastersSharingAHost(t *testing.T) {
	cluster := func(hosts ...string) Run {
		r := Run{Driver: "lockcore", Workload: "contention", Topology: "cluster", Complete: true, DurationS: 1, Acquisitions: 30000, ThroughputPerS: 30000}
		for i, h := range hosts {
			r.Nodes = append(r.Nodes,
				NodeResult{Addr: fmt.Sprintf("%s:%d", h, 7000+i), Role: RoleMaster, CPUUS: 2e5},
				NodeResult{Addr: fmt.Sprintf("%s:%d", h, 7100+i), Role: RoleReplica, CPUUS: 1e4})
		}
		r.setRatios()
		return r
	}
	for _, tc := range []struct {
		name string
		run  Run
		want string // "" for no note
	}{
		{"local cluster", cluster("127.0.0.1", "127.0.0.1", "127.0.0.1"), "here 6 servers (masters and replicas) ran on one host (127.0.0.1)"},
		{"spread cluster", cluster("10.0.0.1", "10.0.0.2", "10.0.0.3"), ""},
	} {
		var buf bytes.Buffer
		if err := WriteSummary(&buf, []Run{tc.run}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if !strings.Contains(out, "server-bound capacity") {
			t.Fatalf("%s: no projection to note:\n%s", tc.name, out)
		}
		has := strings.Contains(out, "assumes a CPU core per master")
		switch {
		case tc.want == "" && has:
			t.Errorf("%s: noted a shared host:\n%s", tc.name, out)
		case tc.want != "" && !strings.Contains(out, tc.want):
			t.Errorf("%s: summary lacks %q:\n%s", tc.name, tc.want, out)
		}
	}
}
