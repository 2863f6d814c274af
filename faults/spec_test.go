package faults

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	good := []struct {
		spec string
		want Fault
	}{
		{"kill:master@3s", Fault{Action: Kill, Node: Node{RoleMaster, 1}, At: 3 * time.Second}},
		{"kill:master2@0s", Fault{Action: Kill, Node: Node{RoleMaster, 2}}},
		{"pause:master@3s+2s", Fault{Action: Pause, Node: Node{RoleMaster, 1}, At: 3 * time.Second, For: 2 * time.Second}},
		{"pause:replica1@500ms+1.5s", Fault{Action: Pause, Node: Node{RoleReplica, 1}, At: 500 * time.Millisecond, For: 1500 * time.Millisecond}},
		{"restart:master@8s", Fault{Action: Restart, Node: Node{RoleMaster, 1}, At: 8 * time.Second}},
		{"kill:sentinel2@3s", Fault{Action: Kill, Node: Node{RoleSentinel, 2}, At: 3 * time.Second}},
		{"kill:node3@3s", Fault{Action: Kill, Node: Node{RoleNode, 3}, At: 3 * time.Second}},
		{"failover@3s", Fault{Action: Failover, At: 3 * time.Second}},
		{"failover:replica2@1m", Fault{Action: Failover, Node: Node{RoleReplica, 2}, At: time.Minute}},
		{"partition:master@3s+2s", Fault{Action: Partition, Node: Node{RoleMaster, 1}, At: 3 * time.Second, For: 2 * time.Second}},
		{"isolate:master@1s+8s", Fault{Action: Isolate, Node: Node{RoleMaster, 1}, At: time.Second, For: 8 * time.Second}},
		{"kill:gen2@3s", Fault{Action: Kill, Node: Node{RoleGen, 2}, At: 3 * time.Second}},
		{"kill:proc2@3s", Fault{Action: Kill, Node: Node{RoleGen, 2}, At: 3 * time.Second}}, // the older name
		{"pause-client:gen1@1s+2s", Fault{Action: PauseClient, Node: Node{RoleGen, 1}, At: time.Second, For: 2 * time.Second}},
		{"PAUSE-CLIENT:Gen12@0s+500ms", Fault{Action: PauseClient, Node: Node{RoleGen, 12}, For: 500 * time.Millisecond}},
		{"stall:gen2@3s+2s", Fault{Action: Stall, Node: Node{RoleGen, 2}, At: 3 * time.Second, For: 2 * time.Second}},
		{"stall:proc1@3s+2s", Fault{Action: Stall, Node: Node{RoleGen, 1}, At: 3 * time.Second, For: 2 * time.Second}},
		{" KILL:Master@3s ", Fault{Action: Kill, Node: Node{RoleMaster, 1}, At: 3 * time.Second}},
	}
	for _, tc := range good {
		got, err := Parse(tc.spec)
		tc.want.Spec = tc.spec
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
		}
	}

	bad := []struct{ spec, says string }{
		{"", "no @AT"},
		{"kill:master", "no @AT"},
		{"explode:master@3s", `unknown action "explode"`},
		{"kill@3s", "kill needs a node"},
		{"pause@3s+1s", "pause needs a node"},
		{"kill:leader@3s", `unknown node "leader"`},
		{"kill:replica@3s", "needs a number"},
		{"kill:replica0@3s", "not a position from 1"},
		{"kill:replica-1@3s", "not a position from 1"},
		{"kill:replicax@3s", "not a position from 1"},
		{"kill:master@3", "want a duration with a unit"},
		{"kill:master@-1s", "must not be negative"},
		{"kill:master@48h", "over 24h"},
		{"kill:master@3s+2s", "kill takes no +duration"},
		{"restart:master@3s+2s", "restart takes no +duration"},
		{"pause:master@3s", "pause needs a duration"},
		{"partition:master@3s", "partition needs a duration"},
		{"isolate:master@3s", "isolate needs a duration"},
		{"pause:master@3s+0s", "must be positive"},
		{"pause:master@3s+x", `duration "x"`},
		{"failover:master@3s", "names the replica to promote"},
		{"pause:proc1@1s+1s", "a generator process can be paused (pause-client:gen1)"},
		{"restart:gen1@1s", "not given restart"},
		{"pause-client:gen1@1s", "pause-client needs a duration"},
		{"stall:gen1@1s", "stall needs a duration"},
		{"stall:gen1@1s+0s", "must be positive"},
		{"pause-client@1s+1s", "pause-client needs a generator process, e.g. pause-client:gen1"},
		{"pause-client:master@1s+1s", "acts on a generator process of lockbench, genN"},
		{"stall:replica1@1s+1s", "not replica1"},
		{"stall:gen0@1s+1s", "not a position from 1"},
		{"stall:gen@1s+1s", "needs a number"},
	}
	for _, tc := range bad {
		_, err := Parse(tc.spec)
		if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Parse(%q) = %v; want ErrSpec saying %q", tc.spec, err, tc.says)
		}
	}
}

func TestNodeString(t *testing.T) {
	for _, tc := range []struct {
		n    Node
		want string
	}{
		{Node{RoleMaster, 1}, "master"},
		{Node{RoleMaster, 2}, "master2"},
		{Node{RoleReplica, 1}, "replica1"},
		{Node{RoleGen, 1}, "gen1"},
		{Node{}, ""},
	} {
		if got := tc.n.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts it accepts again from the node's name.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"kill:master@3s", "pause:replica1@3s+2s", "failover@1s", "kill:node12@0s", "x@y+z", "pause-client:gen2@1s+2s", "stall:proc1@0s+1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("Parse(%q): error %v does not wrap ErrSpec", s, err)
			}
			return
		}
		if flt.Node.Role != "" {
			if _, err := parseNode(flt.Node.String()); err != nil {
				t.Fatalf("Parse(%q) gave node %q, which does not parse: %v", s, flt.Node, err)
			}
		}
	})
}
