package workloads

import (
	"context"
	"errors"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Reentrancy is the reentrancy workload: each cycle picks a key (as contention does) and takes
// its lock Config.Depth times, nested, by the same owner; holds it for Config.Hold; and releases
// it as many times, in reverse. Where the driver's workers can read their hold count from Redis
// (drivers.HoldCounter) the count is checked at every level on the way in and on the way out: a
// count other than the level is a safety violation (a lost lease reads 0). A Checker sees the
// outermost hold, so two owners inside at once are violations too. The acquire latency is the
// outermost grant's; the cycle covers every level and check. It needs drivers.KindReentrant and
// is safe for concurrent use.
type Reentrancy struct{}

func init() { register(Reentrancy{}) }

// Name implements Workload.
func (Reentrancy) Name() string { return "reentrancy" }

// Needs implements Workload.
func (Reentrancy) Needs() drivers.Kind { return drivers.KindMutex | drivers.KindReentrant }

// Start implements Workload.
func (Reentrancy) Start(cfg *Config) Instance {
	return &reentrancyRun{cfg: cfg, names: keyNames(cfg.KeyPrefix, cfg.Keys), checker: NewChecker(cfg.Keys)}
}

type reentrancyRun struct {
	cfg     *Config
	names   []string
	checker *Checker
	holds   holdCounts
}

var _ HoldReporter = (*reentrancyRun)(nil)

func (r *reentrancyRun) Violations() int64 { return r.checker.Violations() + r.holds.violations() }

// Holds implements HoldReporter.
func (r *reentrancyRun) Holds() results.HoldChecks { return r.holds.report() }

func (r *reentrancyRun) NewCycler(id int, w drivers.Worker, release context.Context) Cycler {
	return &reentrancyCycler{r: r, w: w, hc: r.holds.counter(w), keys: newKeyChooser(r.cfg, id), cycleBase: newCycleBase(r.cfg, id, release)}
}

type reentrancyCycler struct {
	r    *reentrancyRun
	w    drivers.Worker
	hc   drivers.HoldCounter // nil: the driver cannot report its count
	keys *keyChooser
	cycleBase
}

func (cy *reentrancyCycler) Cycle(ctx context.Context, rec *results.Recorder) error {
	k := cy.keys.next()
	name := cy.r.names[k]
	depth := cy.r.cfg.Depth
	start := time.Now()
	var acquired time.Time
	taken := 0
	var lockErr error
	for taken < depth {
		if lockErr = cy.w.Lock(ctx, name); lockErr != nil {
			break
		}
		taken++
		if taken == 1 {
			acquired = time.Now()
			cy.r.checker.Enter(k, cy.worker)
		}
		cy.check(name, taken, rec)
	}
	if taken == 0 {
		return cy.acquireFailed(ctx, rec, lockErr)
	}
	if taken == depth {
		cy.holdLock(ctx, acquired)
	}
	// Out in reverse, checking the count before each release. The checks and inner releases
	// use the release context, so a run that ends mid-cycle still unwinds every level.
	var relStart time.Time
	var relErr error
	for level := taken; level >= 1; level-- {
		cy.check(name, level, rec)
		if level == 1 {
			cy.r.checker.Exit(k, cy.worker)
			relStart = time.Now()
		}
		err := cy.w.Unlock(cy.release, name)
		switch {
		case level == 1:
			relErr = err
		case errors.Is(err, drivers.ErrNotHeld):
			countError(rec, "lease_lost", err)
		case err != nil:
			countError(rec, failureKind(kindRelease, err), err)
		}
	}
	if taken < depth {
		// A nested Lock of a lock the owner holds failed: only the run's end excuses that.
		if ctx.Err() != nil {
			return ctx.Err()
		}
		countError(rec, "reentrant_acquire", lockErr)
		cy.pause(ctx)
		return nil
	}
	cy.released(ctx, rec, relErr, start, acquired, relStart)
	return nil
}

// check compares the hold count in Redis with level, when the driver can report it.
func (cy *reentrancyCycler) check(name string, level int, rec *results.Recorder) {
	if cy.hc != nil {
		cy.r.holds.count(cy.release, cy.hc, name, int64(level), rec)
	}
}
