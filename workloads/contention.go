package workloads

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Contention is N workers over K exclusive locks: pick a key, take it, hold it, release it. With
// a fenced lock driver (its workers are drivers.FencedWorkers) it also checks the fencing tokens:
// see FenceChecker. With Config.Resource every holder writes to it as its hold starts and ends,
// passing its fencing token if it has one. It is safe for concurrent use.
type Contention struct{}

func (Contention) writesResource() {}

func init() { register(Contention{}) }

// Name implements Workload.
func (Contention) Name() string { return "contention" }

// Needs implements Workload.
func (Contention) Needs() drivers.Kind { return drivers.KindMutex }

// Start implements Workload.
func (Contention) Start(cfg *Config) Instance {
	return &contention{cfg: cfg, names: keyNames(cfg.KeyPrefix, cfg.Keys), checker: cfg.checker(), fifo: NewFIFOTracker(),
		resource: &resourceWriter{res: cfg.Resource}}
}

type contention struct {
	cfg       *Config
	names     []string
	checker   *Checker
	fifo      *FIFOTracker
	fenceOnce sync.Once
	fence     atomic.Pointer[FenceChecker] // nil until a fenced worker joins
	resource  *resourceWriter
}

var (
	_ SafetyReporter   = (*contention)(nil)
	_ FIFOReporter     = (*contention)(nil)
	_ ResourceReporter = (*contention)(nil)
)

// Resource implements ResourceReporter.
func (c *contention) Resource() *results.Resource { return c.resource.result() }

// FIFO implements FIFOReporter.
func (c *contention) FIFO() *results.FIFOFidelity { return results.NewFIFOFidelity(c.fifo.Counts()) }

func (c *contention) Violations() int64 {
	return c.checker.Violations() + c.fencingViolations()
}

// Safety implements SafetyReporter: the fencing part of Violations.
func (c *contention) Safety() Safety { return Safety{FencingViolations: c.fencingViolations()} }

func (c *contention) fencingViolations() int64 {
	if f := c.fence.Load(); f != nil {
		return f.Violations()
	}
	return 0
}

// NewCycler returns the cycle of worker id. A FencedWorker (a fenced lock driver) takes its locks
// with LockFenced, and the run also checks that each key's tokens rise in grant order.
func (c *contention) NewCycler(id int, w drivers.Worker, release context.Context) Cycler {
	cy := &contentionCycler{c: c, w: w, keys: newKeyChooser(c.cfg, id), cycleBase: newCycleBase(c.cfg, id, release)}
	if fw, ok := w.(drivers.FencedWorker); ok {
		cy.fenced = fw
		cy.fence = c.fenceChecker()
	}
	return cy
}

// fenceChecker returns the run's fence checker, made by the first fenced worker: a run without
// one does not pay for a last-token slot per key.
func (c *contention) fenceChecker() *FenceChecker {
	c.fenceOnce.Do(func() { c.fence.Store(c.cfg.fenceChecker()) })
	return c.fence.Load()
}

type contentionCycler struct {
	c      *contention
	w      drivers.Worker
	fenced drivers.FencedWorker // w, when it hands out fencing tokens
	fence  *FenceChecker        // set with fenced
	keys   *keyChooser
	cycleBase
}

func (cy *contentionCycler) Cycle(ctx context.Context, rec *results.Recorder) error {
	k := cy.keys.next()
	name := cy.c.names[k]
	arrival := cy.c.fifo.Arrive(k)
	start := time.Now()
	var token int64
	var err error
	if cy.fenced != nil {
		token, err = cy.fenced.LockFenced(ctx, name)
	} else {
		err = cy.w.Lock(ctx, name)
	}
	if err != nil {
		cy.c.fifo.Abandon(k, arrival)
		return cy.acquireFailed(ctx, rec, err)
	}
	acquired := time.Now()
	cy.c.fifo.Granted(k, arrival, rec != nil)
	cy.c.checker.Enter(k, cy.worker)
	if cy.fence != nil {
		// A token out of order is a safety violation the checker counts, not an error: the
		// cycle itself worked, and errors stay about drivers and servers.
		cy.fence.Observe(k, token)
	}
	// The holder writes what the lock protects as its hold starts and as it ends: a hold that
	// outlives its lease lets another holder's writes fall between the two.
	cy.c.resource.write(k, cy.worker, token, cy.fenced != nil, false)
	cy.holdLock(ctx, acquired)
	cy.c.resource.write(k, cy.worker, token, cy.fenced != nil, true)
	cy.c.checker.Exit(k, cy.worker)
	cy.c.fifo.Released(k)
	// The release is not bound to ctx: a run that ends mid-hold still gives the lock back.
	relStart := time.Now()
	err = cy.w.Unlock(cy.release, name)
	if errors.Is(err, drivers.ErrNotHeld) {
		cy.c.resource.lost.Add(1) // found only now: the writes above were made without the lock
	}
	cy.released(ctx, rec, err, start, acquired, relStart)
	return nil
}
