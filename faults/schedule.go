package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/compose"
)

// undoTimeout bounds the resume of a paused server once the run has ended: it runs on a context
// of its own, because the run's may have ended. (Partitioner.Heal takes none: it must return
// promptly.)
const undoTimeout = 10 * time.Second

// ErrNotFired is an Event's error when the schedule ended (the phase ended, or was
// interrupted) before the fault's time came.
var ErrNotFired = errors.New("not fired: the phase ended first")

// Event is what became of one fault of a schedule. It is a plain value.
type Event struct {
	Fault Fault
	// Addr is the node the fault acted on, resolved when it fired; "" if it never was.
	Addr string
	// Fired says the fault started; FiredAt is when, from the schedule's start, taken just
	// before the action (after the node was resolved).
	Fired   bool
	FiredAt time.Duration
	// InEffectAt is when the fault took effect, from the schedule's start: FiredAt, except for
	// a kill, whose server answers until its process is gone (FiredAt+Took).
	InEffectAt time.Duration
	// Took is how long the action itself took: a kill until the process was gone, a restart
	// until the server answered, a pause until SIGSTOP was sent, a fail-over until the command
	// was answered.
	Took time.Duration
	// Lasted is, for a pause or partition, the time from FiredAt until the server was resumed or
	// the node healed (shorter than planned when the phase ended first); for the other
	// actions, Took.
	Lasted time.Duration
	// Err is why the fault, or undoing it, failed; ErrNotFired if it never started.
	Err error
}

// Schedule is a list of faults to carry out against a Target during a measured phase. Set its
// fields, then call Run once.
type Schedule struct {
	Faults []Fault
	Target Target
	// Partitioner carries out partition faults; nil makes them fail (Validate refuses them
	// first when the Layout says there is no proxy).
	Partitioner Partitioner
	// Isolator carries out isolate faults; nil makes them fail (Validate refuses them first
	// when the Layout says the topology cannot isolate a node).
	Isolator Isolator
	// Clients carries out pause-client faults on the run's generator processes; nil makes them
	// fail. (Stall faults are not scheduled: the generator process carries them out itself.)
	Clients Clients
	// OnFire, if set, is called once for each fault i (its index in Faults) that takes effect,
	// with the instant it does (Event.InEffectAt): as it starts, before the action, or for a
	// kill once the process is gone, as a lock the dying server grants is no grant made after
	// the master was lost. lockbench marks it to find the first grant after the fault. It is
	// called from the schedule's goroutines, possibly concurrently.
	OnFire func(i int, at time.Time)
}

// Run carries out the faults at start + their At until ctx ends, and returns one Event per
// fault, in the order of Faults, once every fault has ended. Faults fire independently, each on
// its own goroutine, so a slow restart delays no other fault. When ctx ends, faults not yet
// started are not started, and every paused server is resumed and every partition healed (and
// isolated node let rejoin) at once, before Run returns: nothing is left stopped. Run is
// bounded: a kill, restart or fail-over is bounded by ctx; a pause, partition or isolation,
// short by nature (a signal, one command), runs to its end once begun, as undoing does, each
// bounded by undoTimeout.
func (s *Schedule) Run(ctx context.Context, start time.Time) []Event {
	r := &run{s: s, start: start, killed: make(map[Node]string)}
	events := make([]Event, len(s.Faults))
	var wg sync.WaitGroup
	for i, f := range s.Faults {
		wg.Go(func() { events[i] = r.one(ctx, i, f) })
	}
	wg.Wait()
	return events
}

// run is one Run's shared state.
type run struct {
	s     *Schedule
	start time.Time

	mu     sync.Mutex
	killed map[Node]string // node name → address its kill resolved, for restarts
}

func (r *run) one(ctx context.Context, i int, f Fault) Event {
	ev := Event{Fault: f}
	t := time.NewTimer(time.Until(r.start.Add(f.At)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		ev.Err = ErrNotFired
		return ev
	case <-t.C:
	}
	addr, err := r.resolveWaiting(ctx, f)
	if err != nil {
		ev.Err = err
		return ev
	}
	ev.Addr = addr
	fired := time.Now()
	ev.Fired, ev.FiredAt, ev.InEffectAt = true, fired.Sub(r.start), fired.Sub(r.start)
	if r.s.OnFire != nil && f.Action != Kill {
		r.s.OnFire(i, fired)
	}
	undone := f.Action == Pause || f.Action == Partition || f.Action == Isolate || f.Action == PauseClient
	actx := ctx
	if undone {
		// A pause or isolation is one command. Cancelled half-way by the run's end (Ctrl-C as
		// docker pause was answering), it may have taken effect with its reply lost: we would
		// report it failed and never undo it, leaving a server or generator stopped. So it runs
		// to its end on a context of its own, bounded like an undo, and is undone below.
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer cancel()
	}
	ev.Err = r.act(actx, f, addr)
	ev.Took = time.Since(fired)
	ev.Lasted = ev.Took
	if f.Action == Kill {
		ev.InEffectAt += ev.Took
		if r.s.OnFire != nil && ev.Err == nil {
			r.s.OnFire(i, fired.Add(ev.Took))
		}
	}
	if !undone {
		return ev
	}
	if ev.Err != nil {
		// A failed pause may still have stopped its target (a timeout after the daemon acted):
		// undo it at once, and report the pause's own error.
		if r.canUndo(f) {
			_ = r.undo(ctx, f, addr)
		}
		return ev
	}
	// Paused or partitioned: undo when the time is up or the phase ends, whichever is first.
	t.Reset(f.For - time.Since(fired))
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	if err := r.undo(ctx, f, addr); err != nil {
		ev.Err = fmt.Errorf("undo: %w", err)
	}
	ev.Lasted = time.Since(fired)
	return ev
}

// startPoll is how often a fault on a generator not started yet asks again.
const startPoll = 20 * time.Millisecond

// resolveWaiting is resolve, waiting for a generator that has not started yet (ErrNotStarted)
// until it does or ctx ends. A generator that had not started by the phase's end is a failed
// fault, not ErrNotFired: the phase was not too short for it, the generator was missing.
func (r *run) resolveWaiting(ctx context.Context, f Fault) (string, error) {
	for {
		addr, err := r.resolve(f)
		if !errors.Is(err, ErrNotStarted) {
			return addr, err
		}
		select {
		case <-ctx.Done():
			// Not err's text: its chain names the generator three times over.
			return "", fmt.Errorf("%s had not started when the phase ended (%w)", f.Node, ErrNotStarted)
		case <-time.After(startPoll):
		}
	}
}

// resolve finds the address the fault acts on ("" for a sentinel fail-over): for a generator
// process, what Clients names it by.
func (r *run) resolve(f Fault) (string, error) {
	if f.Node.Role == RoleGen {
		if r.s.Clients == nil {
			return "", fmt.Errorf("no generator processes to act on (%s needs --procs 2 or more, or --generators docker)", f.Action)
		}
		return r.s.Clients.Name(f.Node.N)
	}
	switch f.Action {
	case Restart:
		r.mu.Lock()
		addr, ok := r.killed[f.Node]
		r.mu.Unlock()
		if !ok {
			return "", fmt.Errorf("no earlier kill:%s killed a server to restart", f.Node)
		}
		return addr, nil
	case Failover:
		d := r.s.Target.Describe()
		if d.Kind != compose.KindCluster {
			return "", nil
		}
		return failoverReplica(d, f.Node)
	}
	return Resolve(r.s.Target.Describe(), f.Node)
}

// act carries out the fault on addr.
func (r *run) act(ctx context.Context, f Fault, addr string) error {
	switch f.Action {
	case Kill:
		err := r.s.Target.Kill(ctx, addr)
		if err == nil {
			r.mu.Lock()
			r.killed[f.Node] = addr
			r.mu.Unlock()
		}
		return err
	case Pause:
		return r.s.Target.Pause(ctx, addr)
	case Restart:
		return r.s.Target.Restart(ctx, addr)
	case Failover:
		return r.s.Target.Failover(ctx, addr)
	case Partition:
		if r.s.Partitioner == nil {
			return errors.New("no network proxy to partition with (--net)")
		}
		return r.s.Partitioner.Partition(addr)
	case Isolate:
		if r.s.Isolator == nil {
			return errors.New("this topology cannot isolate a node (--provider docker --topology sentinel can)")
		}
		return r.s.Isolator.Isolate(ctx, addr)
	case PauseClient:
		return r.s.Clients.Pause(ctx, f.Node.N)
	case Stall:
		return errors.New("a stall is carried out by the generator process itself, not scheduled")
	}
	return fmt.Errorf("unknown action %q", f.Action)
}

// canUndo reports whether the schedule has what undoing f needs: a failed fault may have failed
// for want of it (a partition without a proxy).
func (r *run) canUndo(f Fault) bool {
	switch f.Action {
	case Pause:
		return r.s.Target != nil
	case PauseClient:
		return r.s.Clients != nil
	case Isolate:
		return r.s.Isolator != nil
	case Partition:
		return r.s.Partitioner != nil
	}
	return false
}

// undo resumes, heals or lets rejoin what f stopped at addr, on a context of its own bounded by
// undoTimeout, because the run's may have ended.
func (r *run) undo(ctx context.Context, f Fault, addr string) error {
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	switch f.Action {
	case Pause:
		return r.s.Target.Resume(uctx, addr)
	case PauseClient:
		return r.s.Clients.Resume(uctx, f.Node.N)
	case Isolate:
		return r.s.Isolator.Rejoin(uctx, addr)
	default:
		return r.s.Partitioner.Heal(addr)
	}
}
