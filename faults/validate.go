package faults

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/compose"
)

// Layout is what a schedule is checked against: the topology's shape and what the run can do
// to it. It is a plain value.
type Layout struct {
	// Kind is the topology kind (compose.KindSingle, …).
	Kind string
	// Masters, Replicas and Sentinels count the nodes of each role.
	Masters, Replicas, Sentinels int
	// Signals says the run can kill, pause and restart the servers: lockbench started them
	// as native processes. Why it cannot, when it cannot, is NoSignals.
	Signals   bool
	NoSignals string
	// Partition says the run has a network proxy that can partition a node (see Partitioner).
	Partition bool
	// Isolate says the topology can cut its first master off from its other nodes (see
	// Isolator): the Docker provider's sentinel topology.
	Isolate bool
	// Procs is the number of generator processes (lockbench run --procs); 1 or less: one.
	Procs int
	// Containers says the generator processes run in containers (--generators docker): even
	// one is then apart from lockbench's own process, and can be paused.
	Containers bool
	// Duration is the measured phase: a fault must start inside it.
	Duration time.Duration
}

// LayoutOf counts the roles of d into a Layout of d.Kind; the caller sets the rest.
func LayoutOf(d compose.Description) Layout {
	l := Layout{Kind: d.Kind}
	for _, n := range d.Nodes {
		switch n.Role {
		case compose.RoleMaster:
			l.Masters++
		case compose.RoleReplica:
			l.Replicas++
		case compose.RoleSentinel:
			l.Sentinels++
		}
	}
	return l
}

// LayoutFor returns the layout of the topology lockbench starts for spec (compose.Start), so a
// schedule can be checked before anything starts; the caller sets the rest.
func LayoutFor(spec compose.Spec) Layout {
	l := Layout{Kind: spec.Kind, Masters: 1}
	switch spec.Kind {
	case compose.KindSentinel:
		l.Replicas, l.Sentinels = compose.SentinelReplicas, compose.SentinelCount
	case compose.KindCluster:
		l.Masters, l.Replicas = compose.ClusterMasters, compose.ClusterReplicas
	case compose.KindMasters:
		l.Masters = spec.Masters
	}
	return l
}

// Validate checks that every fault fits the layout and the schedule as a whole makes sense: the
// nodes exist, the actions apply to the topology and can be carried out by this run, every
// fault starts inside the measured phase, and every restart follows a kill of the same node.
// Errors wrap ErrSpec and name the fault.
func Validate(fs []Fault, l Layout) error {
	if len(fs) > MaxFaults {
		return fmt.Errorf("%w: %d faults, at most %d", ErrSpec, len(fs), MaxFaults)
	}
	for i, f := range fs {
		if err := validateOne(f, l); err != nil {
			return fmt.Errorf("%w %q: %v", ErrSpec, f.Spec, err)
		}
		if err := overlaps(i, fs); err != nil {
			return fmt.Errorf("%w %q: %v", ErrSpec, f.Spec, err)
		}
		if f.Action != Restart {
			continue
		}
		killed := slices.ContainsFunc(fs, func(k Fault) bool {
			return k.Action == Kill && k.Node == f.Node && k.At < f.At
		})
		if !killed {
			return fmt.Errorf("%w %q: restart brings back the server an earlier kill:%s killed, and there is none before %v",
				ErrSpec, f.Spec, f.Node, f.At)
		}
	}
	return nil
}

// validateOne checks one fault against the layout.
func validateOne(f Fault, l Layout) error {
	if l.Duration > 0 && f.At >= l.Duration {
		return fmt.Errorf("starts at %v, not inside the measured phase of %v", f.At, l.Duration)
	}
	if f.Node.Role == RoleGen {
		return validateClient(f, l)
	}
	if l.Containers {
		return errors.New("server faults with --generators docker are not implemented yet: run them with --procs N (generator processes on this machine), or with one process (the client faults pause-client and stall work with containers)")
	}
	if l.Procs > 1 && f.Action == Partition {
		return errors.New("partition with --procs: each generator process puts --net on its own connections, where lockbench run cannot cut them; use isolate (--provider docker), or one generator process")
	}
	switch f.Action {
	case Kill, Pause, Restart:
		if !l.Signals {
			why := l.NoSignals
			if why == "" {
				why = "lockbench did not start these servers"
			}
			return fmt.Errorf("%s needs servers lockbench started as native processes: %s", f.Action, why)
		}
	case Failover:
		switch l.Kind {
		case compose.KindSentinel:
			if f.Node.Role != "" {
				return fmt.Errorf("on sentinel the sentinels pick the replica to promote: write failover@%v", f.At)
			}
		case compose.KindCluster:
		default:
			return fmt.Errorf("a %s topology has no fail-over (sentinel and cluster have)", l.Kind)
		}
	case Partition:
		if !l.Partition {
			return errors.New("partition needs a network proxy between clients and Redis (--net; --net latency=0 adds no delay), which this run does not have")
		}
	case Isolate:
		if !l.Isolate {
			return errors.New("isolate cuts a node off from the other servers while clients still reach it, which needs servers on a network of their own: --provider docker --topology sentinel")
		}
		if f.Node != (Node{RoleMaster, 1}) {
			return fmt.Errorf("isolate works on the sentinel topology's first master (isolate:master), not %s", f.Node)
		}
	}
	if f.Node.Role == "" {
		return nil
	}
	have := map[string]int{
		RoleMaster:   l.Masters,
		RoleReplica:  l.Replicas,
		RoleSentinel: l.Sentinels,
		RoleNode:     l.Masters + l.Replicas + l.Sentinels,
	}[f.Node.Role]
	switch {
	case have == 0:
		return fmt.Errorf("a %s topology has no %s", l.Kind, plural(f.Node.Role))
	case f.Node.N > have:
		return fmt.Errorf("%s: a %s topology has %d %s", f.Node, l.Kind, have, plural(f.Node.Role))
	}
	return nil
}

func plural(role string) string { return role + "s" }

// validateClient checks a fault on a generator process (genN) against the layout.
func validateClient(f Fault, l Layout) error {
	procs := max(l.Procs, 1)
	switch {
	case f.Node.N > procs && procs == 1:
		return fmt.Errorf("%s: this run has one generator process, gen1 (--procs 1); run --procs %d or more for %s", f.Node, f.Node.N, f.Node)
	case f.Node.N > procs:
		return fmt.Errorf("%s: this run has %d generator processes, gen1 to gen%d (--procs %d)", f.Node, procs, procs, procs)
	case f.Action == Kill:
		return errors.New("killing a generator process is not implemented yet")
	case f.Action == PauseClient && procs == 1 && !l.Containers:
		return errors.New("with --procs 1 the only generator is lockbench's own process, which also runs the fault schedule and would not wake up to resume itself: " +
			"run --procs 2 or more (or --generators docker), each a process lockbench can stop and resume; or stall:gen1, which freezes the holders and keeps the process and its watchdog running")
	case l.Duration > 0 && f.At+f.For > l.Duration:
		return fmt.Errorf("ends at %v, after the measured phase of %v: a client fault must end inside the phase, so that the run measures what happens once the process goes on; shorten it or lengthen --duration",
			f.At+f.For, l.Duration)
	}
	return nil
}

// overlaps refuses two client faults on one generator process at once: a second pause would be
// undone by the first one's resume, and a stall during a pause or another stall has no holders
// of its own to freeze.
func overlaps(i int, fs []Fault) error {
	f := fs[i]
	if !f.Action.Client() {
		return nil
	}
	for j, g := range fs {
		if j == i || !g.Action.Client() || g.Node != f.Node {
			continue
		}
		if f.At < g.At+g.For && g.At < f.At+f.For {
			return fmt.Errorf("overlaps %s on %s: one client fault at a time per generator process", g.Spec, f.Node)
		}
	}
	return nil
}
