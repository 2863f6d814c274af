package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
)

// Target is the deployment a Schedule acts on. Addresses are as Describe lists them.
// Implementations must be safe for concurrent use: a pause's resume may run beside another
// fault.
type Target interface {
	// Describe returns the nodes and their roles now; a fault resolves its node by it when it
	// fires.
	Describe() compose.Description
	// Kill sends SIGKILL to the server at addr and waits until it is gone.
	Kill(ctx context.Context, addr string) error
	// Pause stops the server at addr (SIGSTOP); Resume continues it (SIGCONT).
	Pause(ctx context.Context, addr string) error
	Resume(ctx context.Context, addr string) error
	// Restart starts a killed server at addr again, on its port with its config, and waits
	// until it answers.
	Restart(ctx context.Context, addr string) error
	// Failover asks for a fail-over: on sentinel, of the master (replica is ""); on cluster, of
	// the master of the replica at replica, which takes over.
	Failover(ctx context.Context, replica string) error
}

// Partitioner cuts a node off from the clients (and, where it can, from the other nodes) and
// heals it again: the network proxy of lockbench run --net (netem.Net) has this method set, so
// it can be passed as Schedule.Partitioner as is. Both calls must return promptly. A Schedule
// without one fails partition faults, and Validate refuses them unless Layout.Partition says
// there is one. Implementations must be safe for concurrent use.
type Partitioner interface {
	Partition(addr string) error
	Heal(addr string) error
}

// Isolator cuts a node off from the other nodes of its topology while the clients still reach
// it, and lets it rejoin: the Docker provider's sentinel topology (compose/docker's Partition
// and Heal, through an adapter). Implementations must be safe for concurrent use.
type Isolator interface {
	Isolate(ctx context.Context, addr string) error
	Rejoin(ctx context.Context, addr string) error
}

// Clients are the generator processes of a run (lockbench run --procs, --generators docker), as
// client faults act on them: gen is 1-based (gen1 is the worker of index 0). Implementations
// must be safe for concurrent use, and Resume must work on a context of its own after the run
// ended: a Schedule resumes every pause it made before Run returns.
type Clients interface {
	// Name says what generator gen is now ("pid 4242", a container's name), or why it cannot
	// be acted on: an error wrapping ErrNotStarted if it has not started yet but may (the
	// schedule then waits for it), any other if it has ended or never will.
	Name(gen int) (string, error)
	// Pause stops generator gen (SIGSTOP, docker pause); Resume continues it (SIGCONT, docker
	// unpause). Resuming a generator that has ended meanwhile is not an error.
	Pause(ctx context.Context, gen int) error
	Resume(ctx context.Context, gen int) error
}

// ErrNotStarted is wrapped by a Clients' Name about a generator that has not started yet but
// may: a loaded Docker engine once started a generator container 6.6 s after the other, past the
// common start time. A fault on it waits for it, until the phase ends, and fires late (its
// Event.FiredAt says how late) rather than failing.
var ErrNotStarted = errors.New("faults: generator not started yet")

// ErrNoSignals is wrapped by a Deployment's Kill, Pause, Resume and Restart when its topology
// gives no access to its processes (attached, or started in containers).
var ErrNoSignals = errors.New("faults: cannot signal the servers of this topology")

// processes is what a topology with several nodes offers for fault injection
// (compose.Sentinel, compose.Cluster, compose.Masters).
type processes interface {
	Kill(addr string) error
	Signal(addr string, sig os.Signal) error
	Restart(ctx context.Context, addr string) error
}

// Deployment is a Target over a compose.Topology: it signals the processes of a topology
// lockbench started natively, and sends fail-over commands to any (see Signals), with the
// credentials and TLS the run's clients use. It is safe for concurrent use.
type Deployment struct {
	topo   compose.Topology
	conn   *conn.Settings
	single *compose.Single
	procs  processes
}

var _ Target = (*Deployment)(nil)

// NewDeployment returns a Target over topo whose commands connect as s says: the data nodes'
// user, password and TLS for CLUSTER FAILOVER, the sentinels' own for SENTINEL FAILOVER. A nil
// s is plaintext without credentials.
func NewDeployment(topo compose.Topology, s *conn.Settings) *Deployment {
	d := &Deployment{topo: topo, conn: s}
	switch t := topo.(type) {
	case *compose.Single:
		d.single = t
	case processes:
		d.procs = t
	}
	return d
}

// Signals reports whether the deployment can kill, pause and restart its servers: lockbench
// started them as native processes.
func (d *Deployment) Signals() bool { return d.single != nil || d.procs != nil }

// Describe implements Target.
func (d *Deployment) Describe() compose.Description { return d.topo.Describe() }

// Kill implements Target.
func (d *Deployment) Kill(_ context.Context, addr string) error {
	switch {
	case d.procs != nil:
		return d.procs.Kill(addr)
	case d.single != nil && d.single.Addr() == addr:
		return d.single.Kill()
	}
	return d.noSignals(addr)
}

// Pause implements Target.
func (d *Deployment) Pause(_ context.Context, addr string) error {
	return d.signal(addr, syscall.SIGSTOP)
}

// Resume implements Target.
func (d *Deployment) Resume(_ context.Context, addr string) error {
	return d.signal(addr, syscall.SIGCONT)
}

func (d *Deployment) signal(addr string, sig os.Signal) error {
	switch {
	case d.procs != nil:
		return d.procs.Signal(addr, sig)
	case d.single != nil && d.single.Addr() == addr:
		return d.single.Signal(sig)
	}
	return d.noSignals(addr)
}

// Restart implements Target.
func (d *Deployment) Restart(ctx context.Context, addr string) error {
	switch {
	case d.procs != nil:
		return d.procs.Restart(ctx, addr)
	case d.single != nil && d.single.Addr() == addr:
		return d.single.Restart(ctx)
	}
	return d.noSignals(addr)
}

func (d *Deployment) noSignals(addr string) error {
	if d.Signals() {
		return fmt.Errorf("faults: %w: %s", compose.ErrUnknownNode, addr)
	}
	return fmt.Errorf("%w (%s)", ErrNoSignals, addr)
}

// Failover implements Target: SENTINEL FAILOVER on the first sentinel that accepts it, or
// CLUSTER FAILOVER on the replica.
func (d *Deployment) Failover(ctx context.Context, replica string) error {
	desc := d.topo.Describe()
	switch desc.Kind {
	case compose.KindSentinel:
		var errs []error
		for _, n := range desc.Nodes {
			if n.Role != compose.RoleSentinel {
				continue
			}
			err := command(ctx, d.conn, true, n.Addr, "SENTINEL", "FAILOVER", desc.MasterName)
			if err == nil {
				return nil
			}
			errs = append(errs, err)
		}
		if len(errs) == 0 {
			return errors.New("faults: failover: no sentinel to ask")
		}
		return fmt.Errorf("faults: failover: no sentinel accepted SENTINEL FAILOVER %s: %w", desc.MasterName, errors.Join(errs...))
	case compose.KindCluster:
		return command(ctx, d.conn, false, replica, "CLUSTER", "FAILOVER")
	}
	return fmt.Errorf("faults: a %s topology has no fail-over", desc.Kind)
}
