package results

import (
	"maps"
	"strings"
	"testing"
	"time"
)

func TestParseCPU(t *testing.T) {
	tests := []struct {
		name string
		info string
		want time.Duration
		ok   bool
	}{
		{"INFO cpu", "# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:0.750000\r\nused_cpu_sys_children:9.0\r\nused_cpu_user_main_thread:0.5\r\n", 2 * time.Second, true},
		{"integers", "used_cpu_user:3\nused_cpu_sys:0\n", 3 * time.Second, true},
		{"inside a full INFO", "# Server\nredis_version:7.0.15\n# CPU\nused_cpu_sys:0.001\nused_cpu_user:0.002\n", 3 * time.Millisecond, true},
		{"missing user", "used_cpu_sys:1.0\n", 0, false},
		{"empty", "", 0, false},
		{"not a number", "used_cpu_sys:x\nused_cpu_user:1\n", 0, false},
		{"negative", "used_cpu_sys:-1\nused_cpu_user:1\n", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseCPU(tt.info)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%s: ParseCPU = %v, %v; want %v, ok=%v", tt.name, got, err, tt.want, tt.ok)
		}
	}
}

func TestServerStatsSub(t *testing.T) {
	before := ServerStats{
		{Addr: "a:1", Role: RoleMaster, Commands: CommandStats{"evalsha": {Calls: 10}}, CPU: time.Second},
		{Addr: "b:1", Role: RoleReplica, Commands: CommandStats{"hset": {Calls: 4}}, CPU: 2 * time.Second},
	}
	after := ServerStats{
		{Addr: "b:1", Role: RoleReplica, Commands: CommandStats{"hset": {Calls: 9}}, CPU: 3 * time.Second},
		{Addr: "a:1", Role: RoleMaster, Commands: CommandStats{"evalsha": {Calls: 25}, "del": {Calls: 1}}, CPU: 1500 * time.Millisecond},
		{Addr: "new:1", Role: RoleMaster, Commands: CommandStats{"evalsha": {Calls: 1e6}}, CPU: time.Hour},
	}
	d := after.Sub(before)
	if len(d) != 2 || d[0].Addr != "b:1" || d[1].Addr != "a:1" {
		t.Fatalf("delta nodes %+v: want b:1, a:1 in after's order, the unmatched node left out", d)
	}
	if d[0].CPU != time.Second || d[0].Commands["hset"].Calls != 5 || d[0].Role != RoleReplica {
		t.Errorf("b:1 delta %+v", d[0])
	}
	if d[1].CPU != 500*time.Millisecond || d[1].Commands["evalsha"].Calls != 15 || d[1].Commands["del"].Calls != 1 {
		t.Errorf("a:1 delta %+v", d[1])
	}
}

func TestSetServerStats(t *testing.T) {
	delta := ServerStats{
		{Addr: "m1:1", Role: RoleMaster, Commands: CommandStats{"evalsha": {Calls: 300}, "hincrby": {Calls: 100}, "info": {Calls: 2}}, CPU: 30 * time.Millisecond},
		{Addr: "r1:1", Role: RoleReplica, Commands: CommandStats{"hincrby": {Calls: 100}}, CPU: 10 * time.Millisecond},
		{Addr: "m2:1", Role: "", Commands: CommandStats{"evalsha": {Calls: 200}}, CPU: 20 * time.Millisecond},
	}
	for _, fillFirst := range []bool{true, false} {
		var r Run
		if fillFirst {
			r.Fill(linearStats(200), time.Second)
		}
		r.SetServerStats(delta)
		r.SetClientCPU(50 * time.Millisecond)
		if !fillFirst {
			r.Fill(linearStats(200), time.Second)
		}
		// Replicas replay writes: their commands are not the workload's.
		if r.RedisCommands != 600 || r.RedisCommandsPerAcquisition != 3 {
			t.Errorf("fillFirst=%v: commands %d (%.2f/acq), want 600 (3/acq) from the masters only", fillFirst, r.RedisCommands, r.RedisCommandsPerAcquisition)
		}
		if !maps.Equal(r.RedisCommandsByName, map[string]int64{"evalsha": 500, "hincrby": 100}) {
			t.Errorf("fillFirst=%v: by name %v", fillFirst, r.RedisCommandsByName)
		}
		if r.ServerCPUUS != 60000 || r.ServerCPUPerAcquisitionUS != 300 {
			t.Errorf("fillFirst=%v: server cpu %v µs (%v/acq), want 60000 (300/acq) over every node", fillFirst, r.ServerCPUUS, r.ServerCPUPerAcquisitionUS)
		}
		if r.ClientCPUUS != 50000 || r.ClientCPUPerAcquisitionUS != 250 {
			t.Errorf("fillFirst=%v: client cpu %v µs (%v/acq), want 50000 (250/acq)", fillFirst, r.ClientCPUUS, r.ClientCPUPerAcquisitionUS)
		}
		want := []NodeResult{{"m1:1", RoleMaster, 400, 30000}, {"r1:1", RoleReplica, 100, 10000}, {"m2:1", "", 200, 20000}}
		if len(r.Nodes) != len(want) {
			t.Fatalf("nodes %+v, want %+v", r.Nodes, want)
		}
		for i := range want {
			if r.Nodes[i] != want[i] {
				t.Errorf("node %d = %+v, want %+v", i, r.Nodes[i], want[i])
			}
		}
	}
}

func TestRoundTripTopologyAndSkips(t *testing.T) {
	f := testFile(t)
	f.Topology = &Topology{Kind: "masters", Spec: "masters:2", Provider: "native",
		Nodes: []TopologyNode{{"127.0.0.1:7000", RoleMaster}, {"127.0.0.1:7001", RoleMaster}}}
	f.Repeat, f.Baseline = 3, "naive"
	f.Skipped = []Skip{{Driver: "redislock", Workload: "contention", Topology: "masters:2", Reason: "redislock has no multi-master mode"}}
	f.Runs[0].Round, f.Runs[0].TopologySpec = 2, "masters:2"
	f.Runs[0].SetServerStats(ServerStats{{Addr: "127.0.0.1:7000", Role: RoleMaster, Commands: CommandStats{"evalsha": {Calls: 7}}, CPU: time.Millisecond}})
	var buf strings.Builder
	path, err := WriteFile(t.TempDir(), f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	buf.WriteString(path)
	if got.Topology == nil || got.Topology.Spec != "masters:2" || len(got.Topology.Nodes) != 2 || got.Repeat != 3 || got.Baseline != "naive" {
		t.Errorf("topology/repeat/baseline read back as %+v %d %q", got.Topology, got.Repeat, got.Baseline)
	}
	if len(got.Skipped) != 1 || got.Skipped[0] != f.Skipped[0] {
		t.Errorf("skipped read back as %+v", got.Skipped)
	}
	r := got.Runs[0]
	if r.Round != 2 || r.TopologySpec != "masters:2" || len(r.Nodes) != 1 || r.Nodes[0].Commands != 7 || r.Nodes[0].CPUUS != 1000 {
		t.Errorf("run read back as round %d spec %q nodes %+v", r.Round, r.TopologySpec, r.Nodes)
	}
}
