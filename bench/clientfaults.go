package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/fleet"
	"github.com/lockbench/lockbench/generators"
)

// clientFaults runs the faults of a run made by a Fleet from this process, which only
// supervises the generators and so keeps running while one is paused: pause-client on the
// generators, and the server faults on the deployment (kill, pause, restart, failover,
// isolate). The generators' measured phase starts at the common start time plus the warm-up,
// each within milliseconds of the others; the faults' AT counts from there. Stalls are not
// scheduled here: each generator carries out its own (WorkerSpec.Stalls).
type clientFaults struct {
	fr      *FaultRun
	clients faults.Clients
	// servers is the schedule's deployment side: Target, Partitioner and Isolator.
	servers  faults.Schedule
	warmup   time.Duration
	duration time.Duration
	// local turns the common start time, by the clock the processes wait by, into this
	// machine's.
	local func(time.Time) time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// clientFaults returns the schedule of fr for the generators behind clients, which ends with
// ctx, with the measured phase, or with wait, whichever comes first; nil when fr has none.
func (r *remote) clientFaults(ctx context.Context, fr *FaultRun, clients faults.Clients, local func(time.Time) time.Time) *clientFaults {
	if fs, _ := fr.Scheduled(); len(fs) == 0 {
		return nil
	}
	cfg := r.spec.Config
	cfg.Fill()
	c := &clientFaults{fr: fr, clients: clients, warmup: cfg.Warmup, duration: cfg.Duration, local: local,
		servers: ServerSchedule(r.tgt)}
	c.ctx, c.cancel = context.WithCancel(ctx)
	return c
}

// onStart starts the schedule once the common start time is set; call it once.
func (c *clientFaults) onStart(startAt time.Time) {
	start := c.local(startAt).Add(c.warmup)
	sctx, cancel := context.WithDeadline(c.ctx, start.Add(c.duration))
	c.wg.Go(func() {
		defer cancel()
		s := c.servers
		s.Clients = c.clients
		c.fr.RunSchedule(sctx, &s, start)
	})
}

// wait ends the schedule, resuming any process it paused, once the generators have ended (or
// were never started), and waits for it.
func (c *clientFaults) wait() {
	c.cancel()
	c.wg.Wait()
}

// procClients are the child processes of a Fleet as faults.Clients: genN is child N-1 of
// fleet.Run.
type procClients struct{ c *fleet.Children }

var _ faults.Clients = procClients{}

func (p procClients) Name(gen int) (string, error) {
	pid, err := p.c.Pid(gen - 1)
	if errors.Is(err, fleet.ErrNotStarted) {
		return "", fmt.Errorf("%w: %w", faults.ErrNotStarted, err)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("pid %d", pid), nil
}

func (p procClients) Pause(_ context.Context, gen int) error { return p.c.Stop(gen - 1) }

func (p procClients) Resume(_ context.Context, gen int) error { return p.c.Continue(gen - 1) }

// containerClients are the generator containers of a Fleet's Docker as faults.Clients: genN is
// generator N-1 of generators.Run.
type containerClients struct{ c *generators.Containers }

var _ faults.Clients = containerClients{}

func (g containerClients) Name(gen int) (string, error) {
	name, err := g.c.Name(gen - 1)
	if errors.Is(err, generators.ErrNotStarted) {
		return "", fmt.Errorf("%w: %w", faults.ErrNotStarted, err)
	}
	return name, err
}

func (g containerClients) Pause(ctx context.Context, gen int) error { return g.c.Pause(ctx, gen-1) }

func (g containerClients) Resume(ctx context.Context, gen int) error {
	return g.c.Unpause(ctx, gen-1)
}
