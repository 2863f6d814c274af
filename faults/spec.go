package faults

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrSpec is wrapped by the errors of Parse and Validate: the fault is not one lockbench can
// carry out here. It is a value, safe to share.
var ErrSpec = errors.New("bad fault")

// MaxFaults bounds the faults of one schedule.
const MaxFaults = 16

// MaxAt bounds a fault's time and duration, so a typo cannot schedule one days away.
const MaxAt = 24 * time.Hour

// Action is what a fault does.
type Action string

// Actions.
const (
	// Kill sends SIGKILL to a server.
	Kill Action = "kill"
	// Pause sends SIGSTOP, then SIGCONT after the fault's duration.
	Pause Action = "pause"
	// Restart starts a server an earlier Kill of the same node killed.
	Restart Action = "restart"
	// Failover asks the sentinels (SENTINEL FAILOVER) or a cluster replica (CLUSTER FAILOVER)
	// for a fail-over.
	Failover Action = "failover"
	// Partition cuts a node off through a network proxy for the fault's duration (see
	// Partitioner).
	Partition Action = "partition"
	// Isolate cuts a node off from the other nodes of its topology (replicas, sentinels) for
	// the fault's duration, while the clients still reach it (see Isolator): the split brain a
	// partition of the servers' own network causes.
	Isolate Action = "isolate"
	// PauseClient stops a generator process (SIGSTOP, or docker pause for a generator
	// container) and resumes it after the fault's duration: its watchdog stops with it, as in
	// a stop-the-world pause of a real client.
	PauseClient Action = "pause-client"
	// Stall freezes, for the fault's duration, the workers of a generator process that hold a
	// lock when it starts: they stay inside their critical section until it ends, while the
	// process, its watchdog included, runs on (a slow request handler, not a stopped process).
	// The generator process carries it out itself (see workloads.Stall).
	Stall Action = "stall"
)

// Client reports whether a acts on a generator process of lockbench (a client of the
// deployment) rather than on a server.
func (a Action) Client() bool { return a == PauseClient || a == Stall }

// Node roles in a fault spec; they match compose's roles, plus "node" (any) and "gen" (a
// generator process of lockbench run: genN is the Nth, 1-based, the worker started with
// --index N-1; with --procs 1 gen1 is lockbench's own process). "procN" is read as genN.
const (
	RoleMaster   = "master"
	RoleReplica  = "replica"
	RoleSentinel = "sentinel"
	RoleNode     = "node"
	RoleGen      = "gen"
	// roleProc is the name generator processes had before client faults: read as RoleGen.
	roleProc = "proc"
)

// Node names a node by role and 1-based position; the zero value is no node.
type Node struct {
	Role string
	N    int
}

// String returns the node as a spec writes it, e.g. "replica1"; "master" for master 1.
func (n Node) String() string {
	if n.Role == "" {
		return ""
	}
	if n.Role == RoleMaster && n.N == 1 {
		return RoleMaster
	}
	return n.Role + strconv.Itoa(n.N)
}

// Fault is one parsed fault spec. It is a plain value, safe to copy and share.
type Fault struct {
	// Spec is the text the fault was parsed from.
	Spec   string
	Action Action
	// Node is the node it acts on; zero for a failover with none named.
	Node Node
	// At is when it starts, from the start of the measured phase.
	At time.Duration
	// For is how long a pause, partition, isolation, client pause or stall lasts; 0 for the
	// other actions.
	For time.Duration
}

// Parse reads one fault spec, ACTION[:NODE]@AT[+FOR] (see the package doc). Errors wrap
// ErrSpec and say what is wrong and what is expected.
func Parse(spec string) (Fault, error) {
	f := Fault{Spec: spec}
	bad := func(format string, a ...any) (Fault, error) {
		return Fault{}, fmt.Errorf("%w %q: %s (want ACTION[:NODE]@AT[+FOR], e.g. kill:master@3s or pause:replica1@3s+2s)", ErrSpec, spec, fmt.Sprintf(format, a...))
	}
	s := strings.TrimSpace(spec)
	what, when, ok := strings.Cut(s, "@")
	if !ok {
		return bad("no @AT: when the fault starts, from the start of the measured phase")
	}
	action, node, hasNode := strings.Cut(what, ":")
	f.Action = Action(strings.ToLower(action))
	switch f.Action {
	case Kill, Pause, Restart, Failover, Partition, Isolate, PauseClient, Stall:
	default:
		return bad("unknown action %q: want kill, pause, restart, failover, partition, isolate, pause-client or stall", action)
	}
	if hasNode {
		n, err := parseNode(node)
		if err != nil {
			return bad("%v", err)
		}
		f.Node = n
	} else if f.Action.Client() {
		return bad("%s needs a generator process, e.g. %s:gen1", f.Action, f.Action)
	} else if f.Action != Failover {
		return bad("%s needs a node, e.g. %s:master", f.Action, f.Action)
	}
	at, dur, hasFor := strings.Cut(when, "+")
	var err error
	if f.At, err = parseDuration(at); err != nil {
		return bad("time %q: %v", at, err)
	}
	if hasFor {
		if f.For, err = parseDuration(dur); err != nil {
			return bad("duration %q: %v", dur, err)
		}
		if f.For == 0 {
			return bad("duration +%s must be positive", dur)
		}
	}
	switch f.Action {
	case Pause, Partition, Isolate, PauseClient, Stall:
		if !hasFor {
			return bad("%s needs a duration, e.g. %s:%s@%s+2s", f.Action, f.Action, f.Node, at)
		}
	default:
		if hasFor {
			return bad("%s takes no +duration", f.Action)
		}
	}
	if f.Action == Failover && f.Node.Role != "" && f.Node.Role != RoleReplica {
		return bad("failover names the replica to promote (replicaN), or nothing; not %s", f.Node)
	}
	switch {
	case f.Action.Client() && f.Node.Role != RoleGen:
		return bad("%s acts on a generator process of lockbench, genN (gen1 is the first), not %s; pause:%s pauses a server", f.Action, f.Node, f.Node)
	case f.Node.Role == RoleGen && !f.Action.Client() && f.Action != Kill:
		return bad("a generator process can be paused (pause-client:%s), stalled (stall:%s) or killed, not given %s", f.Node, f.Node, f.Action)
	}
	return f, nil
}

// parseNode reads master, masterN, replicaN, sentinelN, nodeN or genN (procN).
func parseNode(s string) (Node, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, role := range []string{RoleMaster, RoleReplica, RoleSentinel, RoleNode, RoleGen, roleProc} {
		num, ok := strings.CutPrefix(s, role)
		if !ok {
			continue
		}
		if num == "" {
			if role == RoleMaster {
				return Node{Role: role, N: 1}, nil
			}
			return Node{}, fmt.Errorf("node %q needs a number: %s1, %s2, …", s, role, role)
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || n > 1000 || strings.HasPrefix(num, "+") {
			return Node{}, fmt.Errorf("node %q: %q is not a position from 1", s, num)
		}
		if role == roleProc {
			role = RoleGen
		}
		return Node{Role: role, N: n}, nil
	}
	return Node{}, fmt.Errorf("unknown node %q: want master, masterN, replicaN, sentinelN, nodeN or genN", s)
}

// parseDuration reads a non-negative duration with a unit, at most MaxAt.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	switch {
	case err != nil:
		return 0, errors.New("want a duration with a unit, e.g. 3s or 500ms")
	case d < 0:
		return 0, errors.New("must not be negative")
	case d > MaxAt:
		return 0, fmt.Errorf("over %v", MaxAt)
	}
	return d, nil
}
