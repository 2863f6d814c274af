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
	for _, f := range fs {
		if err := validateOne(f, l); err != nil {
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
	if f.Node.Role == RoleProc {
		if l.Procs <= 1 {
			return fmt.Errorf("%s is a generator process of --procs, and this run has one process", f.Node)
		}
		return errors.New("killing a generator process (--procs) is not implemented yet")
	}
	if l.Procs > 1 {
		return errors.New("faults with --procs are not implemented yet: run the faults with one generator process")
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
