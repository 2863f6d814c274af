package workloads

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Longhold is the long-hold workload: cycles as contention's, with holds meant to outlast the
// lease (e.g. --hold 3s on a 1 s watchdog lease: lockcore:watchdog=1s), so the lock survives only
// if the driver renews it. At the end of every hold the worker asks Redis whether the lock is
// still its own (drivers.HoldCounter); a count of 0 is a lease lost while held, a safety
// violation. For drivers that cannot report their count, a release refused as not held is the
// lost lease. Renewals per acquisition come from drivers that count them (RenewalCounter). It
// needs Config.Hold > 0 and drivers.KindMutex, and is safe for concurrent use.
type Longhold struct{}

func init() { register(Longhold{}) }

// Name implements Workload.
func (Longhold) Name() string { return "longhold" }

// Needs implements Workload.
func (Longhold) Needs() drivers.Kind { return drivers.KindMutex }

// CheckConfig implements ConfigChecker: a long hold needs a hold.
func (Longhold) CheckConfig(cfg *Config) error {
	if cfg.Hold <= 0 {
		return fmt.Errorf("%w: workload longhold needs --hold longer than the lease (e.g. --hold 3s with lockcore:watchdog=1s)", ErrBadConfig)
	}
	return nil
}

// Start implements Workload.
func (Longhold) Start(cfg *Config) Instance {
	return &longholdRun{cfg: cfg, names: keyNames(cfg.KeyPrefix, cfg.Keys), checker: NewChecker(cfg.Keys)}
}

type longholdRun struct {
	cfg     *Config
	names   []string
	checker *Checker
	holds   holdCounts
}

var _ HoldReporter = (*longholdRun)(nil)

func (r *longholdRun) Violations() int64 { return r.checker.Violations() + r.holds.violations() }

// Holds implements HoldReporter.
func (r *longholdRun) Holds() results.HoldChecks { return r.holds.report() }

func (r *longholdRun) NewCycler(id int, w drivers.Worker, release context.Context) Cycler {
	return &longholdCycler{r: r, w: w, hc: r.holds.counter(w), keys: newKeyChooser(r.cfg, id), cycleBase: newCycleBase(r.cfg, id, release)}
}

type longholdCycler struct {
	r    *longholdRun
	w    drivers.Worker
	hc   drivers.HoldCounter
	keys *keyChooser
	cycleBase
}

func (cy *longholdCycler) Cycle(ctx context.Context, rec *results.Recorder) error {
	k := cy.keys.next()
	name := cy.r.names[k]
	start := time.Now()
	if err := cy.w.Lock(ctx, name); err != nil {
		return cy.acquireFailed(ctx, rec, err)
	}
	acquired := time.Now()
	cy.r.checker.Enter(k, cy.worker)
	cy.holdLock(ctx, acquired)
	lost := false
	if cy.hc != nil {
		n, err := cy.hc.HoldCount(cy.release, name)
		if err != nil {
			countError(rec, "hold_count", err)
		} else {
			cy.r.holds.checks.Add(1)
			lost = n == 0
		}
	}
	cy.r.checker.Exit(k, cy.worker)
	relStart := time.Now()
	err := cy.w.Unlock(cy.release, name)
	if lost || errors.Is(err, drivers.ErrNotHeld) {
		cy.r.holds.lost.Add(1)
	}
	cy.released(ctx, rec, err, start, acquired, relStart)
	return nil
}
