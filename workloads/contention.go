package workloads

import (
	"context"
	"errors"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Contention is N workers over K exclusive locks: pick a key, take it, hold it, release it.
type Contention struct{}

func init() { register(Contention{}) }

// Name implements Workload.
func (Contention) Name() string { return "contention" }

// Needs implements Workload.
func (Contention) Needs() drivers.Kind { return drivers.KindMutex }

// Start implements Workload.
func (Contention) Start(cfg *Config) Instance {
	return &contention{cfg: cfg, names: keyNames(cfg.KeyPrefix, cfg.Keys), checker: NewChecker(cfg.Keys)}
}

type contention struct {
	cfg     *Config
	names   []string
	checker *Checker
}

func (c *contention) Violations() int64 { return c.checker.Violations() }

func (c *contention) NewCycler(id int, w drivers.Worker, release context.Context) Cycler {
	cy := &contentionCycler{c: c, w: w, keys: newKeyChooser(c.cfg, id), release: release}
	if c.cfg.Hold > 0 {
		cy.hold = time.NewTimer(time.Hour)
		cy.hold.Stop()
	}
	return cy
}

type contentionCycler struct {
	c       *contention
	w       drivers.Worker
	keys    *keyChooser
	release context.Context
	hold    *time.Timer // reused across cycles; nil when Hold is 0
	backoff *time.Timer // made on the first error
}

// pause waits ErrorBackoff after a failed operation, so a dead server yields a countable stream
// of errors rather than a busy loop that starves the machine and inflates the count.
func (cy *contentionCycler) pause(ctx context.Context) {
	if cy.backoff == nil {
		cy.backoff = time.NewTimer(ErrorBackoff)
	} else {
		cy.backoff.Reset(ErrorBackoff)
	}
	select {
	case <-cy.backoff.C:
	case <-ctx.Done():
		cy.backoff.Stop()
	}
}

func (cy *contentionCycler) Cycle(ctx context.Context, rec *results.Recorder) error {
	k := cy.keys.next()
	name := cy.c.names[k]
	start := time.Now()
	if err := cy.w.Lock(ctx, name); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		countError(rec, "acquire")
		cy.pause(ctx)
		return nil
	}
	acquired := time.Now()
	cy.c.checker.Enter(k)
	if cy.hold != nil {
		cy.hold.Reset(cy.c.cfg.Hold)
		select {
		case <-cy.hold.C:
		case <-ctx.Done():
			cy.hold.Stop()
		}
	}
	cy.c.checker.Exit(k)
	// The release is not bound to ctx: a run that ends mid-hold still gives the lock back.
	relStart := time.Now()
	err := cy.w.Unlock(cy.release, name)
	end := time.Now()
	switch {
	case errors.Is(err, drivers.ErrNotHeld):
		countError(rec, "lease_lost")
	case err != nil:
		countError(rec, "release")
		cy.pause(ctx)
	case rec != nil:
		rec.Record(acquired.Sub(start), end.Sub(relStart), end.Sub(start))
	}
	return nil
}

func countError(rec *results.Recorder, kind string) {
	if rec != nil {
		rec.Error(kind)
	}
}
