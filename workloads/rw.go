package workloads

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// RW is the read-heavy read-write workload: each cycle picks a key and, with probability
// Config.ReadRatio, takes a read hold that other readers share, else the write lock; it holds it
// for Config.Hold and releases it. Reads and writes are recorded together as acquisitions. An
// RWChecker checks that writers are alone. It needs drivers.KindRW and is safe for concurrent use.
type RW struct{}

func init() { register(RW{}) }

// Name implements Workload.
func (RW) Name() string { return "rw" }

// Needs implements Workload.
func (RW) Needs() drivers.Kind { return drivers.KindRW }

// Start implements Workload.
func (RW) Start(cfg *Config) Instance {
	return &rwRun{cfg: cfg, names: keyNames(cfg.KeyPrefix, cfg.Keys), checker: cfg.rwChecker()}
}

type rwRun struct {
	cfg     *Config
	names   []string
	checker *RWChecker
}

var _ SafetyReporter = (*rwRun)(nil)

func (r *rwRun) Violations() int64 { return r.checker.Violations() }

// Safety implements SafetyReporter: the most readers seen holding one key at once.
func (r *rwRun) Safety() Safety { return Safety{MaxReaders: r.checker.MaxReaders()} }

func (r *rwRun) NewCycler(id int, w drivers.Worker, release context.Context) Cycler {
	rw, ok := w.(drivers.RWWorker)
	if !ok {
		return lacking(drivers.KindRW)
	}
	return &rwCycler{r: r, w: rw, keys: newKeyChooser(r.cfg, id), cycleBase: newCycleBase(r.cfg, id, release)}
}

type rwCycler struct {
	r    *rwRun
	w    drivers.RWWorker
	keys *keyChooser
	cycleBase
}

func (cy *rwCycler) Cycle(ctx context.Context, rec *results.Recorder) error {
	k := cy.keys.next()
	name := cy.r.names[k]
	// The read/write choice comes from the worker's seeded stream, so --seed fixes it too.
	read := cy.keys.rng.Float64() < cy.r.cfg.ReadRatio
	start := time.Now()
	var err error
	if read {
		err = cy.w.RLock(ctx, name)
	} else {
		err = cy.w.Lock(ctx, name)
	}
	if err != nil {
		return cy.acquireFailed(ctx, rec, err)
	}
	acquired := time.Now()
	if read {
		cy.r.checker.EnterRead(k, cy.worker)
	} else {
		cy.r.checker.EnterWrite(k, cy.worker)
	}
	cy.holdLock(ctx, acquired)
	relStart := time.Now()
	if read {
		cy.r.checker.ExitRead(k, cy.worker)
		err = cy.w.RUnlock(cy.release, name)
	} else {
		cy.r.checker.ExitWrite(k, cy.worker)
		err = cy.w.Unlock(cy.release, name)
	}
	cy.released(ctx, rec, err, start, acquired, relStart)
	return nil
}

// rwWriter is one writer in an RWChecker key's state; readers count in the bits below it.
const rwWriter = 1 << 32

// RWChecker checks a read-write lock without trusting it: a writer entering its critical section
// must find no other writer and no reader there, and a reader must find no writer. Each breach is
// counted once, by the one who enters second. It also tracks the most readers inside one key at
// once, which shows that readers share. It sees the holders of this process only, unless its
// state is in memory other processes share (Config.Shared). It is safe for
// concurrent use.
type RWChecker struct {
	state      []atomic.Int64 // per key: readers + writers*rwWriter
	violations atomic.Int64
	shared     *atomic.Int64 // every process's violations, with Config.Shared; else nil
	maxReaders atomic.Int64
	referee    Referee // told of every holder, with Config.Referee; else nil
}

// NewRWChecker returns a checker for keys lock names.
func NewRWChecker(keys int) *RWChecker {
	return &RWChecker{state: make([]atomic.Int64, keys)}
}

// EnterRead marks worker as a reader of key; it counts a violation if a writer is inside.
func (c *RWChecker) EnterRead(key, worker int) {
	v := c.state[key].Add(1)
	if v >= rwWriter {
		c.violations.Add(1)
		countShared(c.shared)
	}
	if c.referee != nil {
		c.referee.Enter(key, worker, true)
	}
	readers := v % rwWriter
	for {
		m := c.maxReaders.Load()
		if readers <= m || c.maxReaders.CompareAndSwap(m, readers) {
			return
		}
	}
}

// ExitRead unmarks worker as a reader of key.
func (c *RWChecker) ExitRead(key, worker int) {
	if c.referee != nil {
		c.referee.Exit(key, worker)
	}
	c.state[key].Add(-1)
}

// EnterWrite marks worker as the writer of key; it counts a violation if anyone else is inside.
func (c *RWChecker) EnterWrite(key, worker int) {
	if c.state[key].Add(rwWriter) != rwWriter {
		c.violations.Add(1)
		countShared(c.shared)
	}
	if c.referee != nil {
		c.referee.Enter(key, worker, false)
	}
}

// ExitWrite unmarks worker as the writer of key.
func (c *RWChecker) ExitWrite(key, worker int) {
	if c.referee != nil {
		c.referee.Exit(key, worker)
	}
	c.state[key].Add(-rwWriter)
}

// Violations returns the violations seen so far.
func (c *RWChecker) Violations() int64 { return c.violations.Load() }

// MaxReaders returns the most readers seen inside one key at once.
func (c *RWChecker) MaxReaders() int64 { return c.maxReaders.Load() }
