package workloads

import (
	"context"
	"errors"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// cycleBase is what every cycler shares: the hold, the pause after an error, the release context
// and the recording of one cycle. Not safe for concurrent use.
type cycleBase struct {
	worker  int // the worker's id, for the checkers
	holdFor time.Duration
	release context.Context
	hold    *time.Timer // reused across cycles; nil when holdFor is 0
	backoff *time.Timer // made on the first error
	stall   *stallGate  // the run's stalls (Config.Stalls); nil: none
}

func newCycleBase(cfg *Config, worker int, release context.Context) cycleBase {
	p := cycleBase{worker: worker, holdFor: cfg.Hold, release: release, stall: cfg.stall}
	if cfg.Hold > 0 {
		p.hold = time.NewTimer(time.Hour)
		p.hold.Stop()
	}
	return p
}

// holdLock keeps the lock granted at acquired for the configured hold, cut short when ctx
// ends, and then, when a stall window started while it was held, until the window ends (see
// Stall).
func (p *cycleBase) holdLock(ctx context.Context, acquired time.Time) {
	if p.hold != nil {
		p.hold.Reset(p.holdFor)
		select {
		case <-p.hold.C:
		case <-ctx.Done():
			p.hold.Stop()
		}
	}
	if p.stall != nil {
		p.stall.hold(ctx, acquired)
	}
}

// pause waits ErrorBackoff after a failed operation, so a dead server yields a countable stream
// of errors rather than a busy loop that starves the machine and inflates the count.
func (p *cycleBase) pause(ctx context.Context) {
	if p.backoff == nil {
		p.backoff = time.NewTimer(ErrorBackoff)
	} else {
		p.backoff.Reset(ErrorBackoff)
	}
	select {
	case <-p.backoff.C:
	case <-ctx.Done():
		p.backoff.Stop()
	}
}

// acquireFailed ends a cycle whose acquisition failed with err: ctx's error once it ended (or
// its deadline passed), else the failure is counted by its kind (see failureKind) and nil
// returned after a pause.
func (p *cycleBase) acquireFailed(ctx context.Context, rec *results.Recorder, err error) error {
	if phaseOver(ctx) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return context.DeadlineExceeded
	}
	countError(rec, failureKind(kindAcquire, err), err)
	if errors.Is(err, drivers.ErrBroken) {
		return err // every attempt after it would fail at once: this worker, and so the phase, ends
	}
	p.pause(ctx)
	return nil
}

// released counts the release's error, or records the cycle that started at start.
func (p *cycleBase) released(ctx context.Context, rec *results.Recorder, err error, start, acquired, relStart time.Time) {
	end := time.Now()
	if rec != nil {
		rec.Granted(start, acquired) // a grant whatever happens to its release
	}
	switch {
	case errors.Is(err, drivers.ErrNotHeld):
		countError(rec, "lease_lost", err)
	case err != nil:
		countError(rec, failureKind(kindRelease, err), err)
		p.pause(ctx)
	case rec != nil:
		rec.Record(acquired.Sub(start), end.Sub(relStart), end.Sub(start))
	}
}

// countError counts one error of kind, keeping err's message among the kind's samples (see
// results.Recorder.ErrorWith); err may be nil.
func countError(rec *results.Recorder, kind string, err error) {
	if rec != nil {
		rec.ErrorWith(kind, err)
	}
}

// phaseOver reports whether ctx has ended or its deadline has passed. A client library that
// takes a socket deadline from ctx (go-redis does) can see that deadline fire a moment before
// ctx's own timer marks ctx done; the attempt it cut short ended with the phase, and counting it
// as a failure would blame the lock for the run's end (the redisson-fair driver's subscriptions
// did, twice in a 20 s round of 64 waiters).
func phaseOver(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}
