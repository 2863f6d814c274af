package faults

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
)

func TestValidate(t *testing.T) {
	native := func(kind string) Layout {
		spec, err := compose.ParseSpec(kind)
		if err != nil {
			t.Fatal(err)
		}
		l := LayoutFor(spec)
		l.Signals, l.Procs, l.Duration = true, 1, 10*time.Second
		return l
	}
	attached := native("sentinel")
	attached.Signals, attached.NoSignals = false, "attached (--addr)"
	withProcs := native("single")
	withProcs.Procs = 2
	oneContainer := native("single")
	oneContainer.Containers = true
	withProxy := native("single")
	withProxy.Partition = true
	withProxyProcs := withProxy
	withProxyProcs.Procs = 2
	dockerSentinel := native("sentinel")
	dockerSentinel.Signals, dockerSentinel.Isolate = false, true

	cases := []struct {
		name   string
		layout Layout
		specs  []string
		says   string // "" = valid
	}{
		{"kill master on single", native("single"), []string{"kill:master@3s"}, ""},
		{"pause and restart", native("sentinel"), []string{"kill:master@3s", "restart:master@8s", "pause:replica2@1s+1s"}, ""},
		{"sentinel node", native("sentinel"), []string{"kill:sentinel3@1s"}, ""},
		{"cluster node 6", native("cluster"), []string{"kill:node6@1s", "failover:replica3@2s", "failover@3s"}, ""},
		{"masters:5 master5", native("masters:5"), []string{"pause:master5@1s+1s"}, ""},
		{"partition with a proxy", withProxy, []string{"partition:master@1s+1s"}, ""},
		{"failover attached", attached, []string{"failover@1s"}, ""},
		{"isolate docker sentinel master", dockerSentinel, []string{"isolate:master@1s+5s"}, ""},
		{"isolate native", native("sentinel"), []string{"isolate:master@1s+5s"}, "--provider docker --topology sentinel"},
		{"isolate a replica", dockerSentinel, []string{"isolate:replica1@1s+5s"}, "not replica1"},

		{"sentinel on single", native("single"), []string{"kill:sentinel2@3s"}, "a single topology has no sentinels"},
		{"replica on single", native("single"), []string{"kill:replica1@3s"}, "a single topology has no replicas"},
		{"node9 on cluster", native("cluster"), []string{"kill:node9@3s"}, "node9: a cluster topology has 6 nodes"},
		{"sentinel4", native("sentinel"), []string{"kill:sentinel4@3s"}, "has 3 sentinels"},
		{"master2 on sentinel", native("sentinel"), []string{"kill:master2@3s"}, "has 1 masters"},
		{"failover on single", native("single"), []string{"failover@3s"}, "a single topology has no fail-over"},
		{"failover on masters", native("masters:3"), []string{"failover@3s"}, "no fail-over"},
		{"failover replica on sentinel", native("sentinel"), []string{"failover:replica1@3s"}, "the sentinels pick"},
		{"failover replica4 on cluster", native("cluster"), []string{"failover:replica4@3s"}, "has 3 replicas"},
		{"after the phase", native("single"), []string{"kill:master@10s"}, "not inside the measured phase"},
		{"restart without kill", native("single"), []string{"restart:master@3s"}, "there is none before 3s"},
		{"restart before kill", native("single"), []string{"restart:master@1s", "kill:master@2s"}, "there is none before 1s"},
		{"restart of another node", native("sentinel"), []string{"kill:replica1@1s", "restart:replica2@2s"}, "kill:replica2"},
		{"kill attached", attached, []string{"kill:master@1s"}, "kill needs servers lockbench started as native processes: attached (--addr)"},
		{"pause attached", attached, []string{"pause:master@1s+1s"}, "pause needs servers"},
		{"partition without proxy", native("single"), []string{"partition:master@1s+1s"}, "partition needs a network proxy"},
		{"proc without procs", native("single"), []string{"kill:proc2@1s"}, "this run has one generator process, gen1 (--procs 1); run --procs 2 or more"},
		{"kill a generator", withProcs, []string{"kill:gen2@1s"}, "killing a generator process is not implemented yet"},
		{"server fault with procs", withProcs, []string{"kill:master@1s", "restart:master@2s"}, ""},
		{"partition with procs", withProxyProcs, []string{"partition:master@1s+1s"}, "each generator process puts --net on its own connections"},
		{"server fault with containers", oneContainer, []string{"kill:master@1s"}, "server faults with --generators docker are not implemented yet"},
		{"server fault in a container", oneContainer, []string{"kill:master@1s"}, "are not implemented yet"},

		{"pause a generator", withProcs, []string{"pause-client:gen2@1s+5s"}, ""},
		{"pause the only container", oneContainer, []string{"pause-client:gen1@1s+5s"}, ""},
		{"stall on one process", native("single"), []string{"stall:gen1@1s+9s"}, ""},
		{"stall and a server fault on one process", native("single"), []string{"stall:gen1@1s+2s", "kill:master@5s"}, ""},
		{"stall and pause of two generators", withProcs, []string{"stall:gen1@1s+2s", "pause-client:gen2@1s+2s"}, ""},
		{"one after the other", withProcs, []string{"pause-client:gen1@1s+2s", "stall:gen1@3s+2s", "pause-client:gen1@5s+1s"}, ""},
		{"pause on one process", native("single"), []string{"pause-client:gen1@1s+1s"}, "run --procs 2 or more (or --generators docker)"},
		{"gen3 of two", withProcs, []string{"pause-client:gen3@1s+1s"}, "gen3: this run has 2 generator processes, gen1 to gen2 (--procs 2)"},
		{"stall gen2 of one", native("single"), []string{"stall:gen2@1s+1s"}, "run --procs 2 or more for gen2"},
		{"pause past the phase", withProcs, []string{"pause-client:gen1@8s+3s"}, "ends at 11s, after the measured phase of 10s"},
		{"stall past the phase", native("single"), []string{"stall:gen1@1s+10s"}, "ends at 11s"},
		{"pause after the phase", withProcs, []string{"pause-client:gen1@10s+1s"}, "not inside the measured phase"},
		{"two pauses at once", withProcs, []string{"pause-client:gen1@1s+2s", "pause-client:gen1@2s+2s"}, `"pause-client:gen1@1s+2s": overlaps pause-client:gen1@2s+2s on gen1`},
		{"the same pause twice", withProcs, []string{"pause-client:gen1@1s+2s", "pause-client:gen1@1s+2s"}, "one client fault at a time"},
		{"stall inside a pause", withProcs, []string{"pause-client:gen2@1s+5s", "stall:gen2@2s+1s"}, "one client fault at a time per generator process"},
	}
	for _, tc := range cases {
		var fs []Fault
		for _, s := range tc.specs {
			f, err := Parse(s)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			fs = append(fs, f)
		}
		err := Validate(fs, tc.layout)
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("%s: %v; want valid", tc.name, err)
		case tc.says != "" && (!errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("%s: %v; want ErrSpec saying %q", tc.name, err, tc.says)
		}
	}

	many := make([]Fault, MaxFaults+1)
	for i := range many {
		many[i], _ = Parse("kill:master@1s")
	}
	if err := Validate(many, native("single")); !errors.Is(err, ErrSpec) {
		t.Errorf("%d faults: %v; want ErrSpec", len(many), err)
	}
}

// LayoutOf counts a description's roles as LayoutFor predicts them for what compose starts.
func TestLayoutOfDescription(t *testing.T) {
	d := compose.Description{Kind: compose.KindSentinel, Nodes: []compose.Node{
		{Addr: "a", Role: compose.RoleMaster}, {Addr: "b", Role: compose.RoleReplica}, {Addr: "c", Role: compose.RoleReplica},
		{Addr: "d", Role: compose.RoleSentinel}, {Addr: "e", Role: compose.RoleSentinel}, {Addr: "f", Role: compose.RoleSentinel},
	}}
	spec, _ := compose.ParseSpec("sentinel")
	if got, want := LayoutOf(d), LayoutFor(spec); got != want {
		t.Errorf("LayoutOf = %+v, LayoutFor = %+v", got, want)
	}
	for _, tc := range []struct {
		n    Node
		want string
	}{
		{Node{RoleMaster, 1}, "a"}, {Node{RoleReplica, 2}, "c"}, {Node{RoleSentinel, 1}, "d"}, {Node{RoleNode, 6}, "f"},
	} {
		if got, err := Resolve(d, tc.n); got != tc.want || err != nil {
			t.Errorf("Resolve(%s) = %q, %v; want %q", tc.n, got, err, tc.want)
		}
	}
	if _, err := Resolve(d, Node{RoleReplica, 3}); err == nil {
		t.Error("Resolve(replica3) of 2 replicas: no error")
	}
}
