package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/fleet"
	"github.com/lockbench/lockbench/generators"
)

// clientFaults runs the faults of a run made by several generator processes (--procs,
// --generators docker) from this process, which only supervises them and so keeps running while
// one is paused: pause-client on the generators, and with --procs the server faults on the
// deployment this process started (kill, pause, restart, failover, isolate). The processes'
// measured phase starts at the common start time plus the warm-up, each within milliseconds of
// the others; the faults' AT counts from there. Stalls are not scheduled here: each generator
// carries out its own (stallArgs).
type clientFaults struct {
	fr      *bench.FaultRun
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

// clientFaults returns the pause-client schedule of fr for the generators behind clients, which
// ends with ctx, with the measured phase, or with wait, whichever comes first; nil when fr has
// none.
func (r *runner) clientFaults(ctx context.Context, fr *bench.FaultRun, clients faults.Clients, local func(time.Time) time.Time) *clientFaults {
	if fs, _ := fr.Scheduled(); len(fs) == 0 {
		return nil
	}
	c := &clientFaults{fr: fr, clients: clients, warmup: max(r.f.cfg.Warmup, 0), duration: r.f.cfg.Duration, local: local,
		servers: bench.ServerSchedule(r.tgt.Target)}
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

// procClients are the generator processes of lockbench run --procs as faults.Clients: genN is
// child N-1 of fleet.Run.
type procClients struct{ c *fleet.Children }

func (p procClients) Name(gen int) (string, error) {
	pid, err := p.c.Pid(gen - 1)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("pid %d", pid), nil
}

func (p procClients) Pause(_ context.Context, gen int) error { return p.c.Stop(gen - 1) }

func (p procClients) Resume(_ context.Context, gen int) error { return p.c.Continue(gen - 1) }

// containerClients are the generator containers of --generators docker as faults.Clients: genN
// is generator N-1 of generators.Run.
type containerClients struct{ c *generators.Containers }

func (g containerClients) Name(gen int) (string, error) { return g.c.Name(gen - 1) }

func (g containerClients) Pause(ctx context.Context, gen int) error { return g.c.Pause(ctx, gen-1) }

func (g containerClients) Resume(ctx context.Context, gen int) error {
	return g.c.Unpause(ctx, gen-1)
}

// stallArgs are the worker flags that make generator process index (0-based) carry out its
// stalls: one --stall AT+FOR each.
func stallArgs(fr []faults.Fault, index int) []string {
	var args []string
	for _, f := range fr {
		if f.Action == faults.Stall && f.Node.N == index+1 {
			args = append(args, "--stall", f.At.String()+"+"+f.For.String())
		}
	}
	return args
}
