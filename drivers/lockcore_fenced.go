package drivers

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/lockcore"
)

// LockcoreFencedDriver is lockcore's fenced lock (Redisson's RFencedLock protocol): the Mutex
// hash plus a token counter at redisson_lock_token:{name} that every grant increments in the
// same script. Its workers are FencedWorkers. The counters have no TTL on purpose (a token must
// never go back) and so stay in Redis after a run: one small key per lock name. It runs on
// single, sentinel and cluster. It takes lockcore's options (watchdog=, batch=, …). It is safe
// for concurrent use.
type LockcoreFencedDriver struct {
	spec string
	tune lockcoreTuning
}

var (
	_ Driver       = LockcoreFencedDriver{}
	_ Configurable = LockcoreFencedDriver{}
)

func init() { Register(LockcoreFencedDriver{}) }

// Name implements Driver.
func (d LockcoreFencedDriver) Name() string {
	if d.spec != "" {
		return d.spec
	}
	return "lockcore-fenced"
}

// Options implements Configurable: lockcore's own, since the fenced lock runs on a lockcore
// Client.
func (LockcoreFencedDriver) Options() []Option { return lockcoreOptions }

// Configure implements Configurable.
func (d LockcoreFencedDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	lc, err := LockcoreDriver{}.Configure(spec, opts)
	if err != nil {
		return nil, err
	}
	return LockcoreFencedDriver{spec: spec, tune: lc.(LockcoreDriver).tune}, nil
}

// Kinds implements Driver.
func (LockcoreFencedDriver) Kinds() Kind { return KindMutex | KindReentrant | KindFenced }

// Open implements Driver. On N independent masters it returns an error wrapping ErrUnsupported.
func (d LockcoreFencedDriver) Open(_ context.Context, cfg Config) (Locker, error) {
	t, err := singleNodeTopology(cfg, d.Name())
	if err != nil {
		return nil, err
	}
	if err := checkNeeds(cfg, d.Name(), d.Kinds()); err != nil {
		return nil, err
	}
	b, err := openLockcore(cfg, t, d.Name(), d.tune)
	if err != nil {
		return nil, err
	}
	return &lockcoreFencedLocker{b}, nil
}

type lockcoreFencedLocker struct{ *lockcoreBase }

func (l *lockcoreFencedLocker) NewWorker() Worker {
	return &lockcoreFencedWorker{c: l.c, owner: l.c.NewOwner(), lease: l.lease}
}

func (l *lockcoreFencedLocker) Settings() map[string]string {
	s := l.settings("FencedMutex (Redisson RFencedLock)")
	s["tokens"] = "INCR of redisson_lock_token:{name} in the grant's script, no TTL"
	return s
}

// lockcoreFencedWorker keeps the FencedMutex of its last lock, like lockcoreWorker.
type lockcoreFencedWorker struct {
	c     *lockcore.Client
	owner lockcore.Owner
	lease time.Duration
	last  *lockcore.FencedMutex
}

var _ FencedWorker = (*lockcoreFencedWorker)(nil)

func (w *lockcoreFencedWorker) fenced(name string) *lockcore.FencedMutex {
	if w.last == nil || w.last.Name() != name {
		w.last = w.c.FencedMutex(name)
	}
	return w.last
}

// LockFenced implements FencedWorker.
func (w *lockcoreFencedWorker) LockFenced(ctx context.Context, name string) (int64, error) {
	if w.lease > 0 {
		return w.fenced(name).LockLease(ctx, w.owner, w.lease)
	}
	return w.fenced(name).Lock(ctx, w.owner)
}

func (w *lockcoreFencedWorker) Lock(ctx context.Context, name string) error {
	_, err := w.LockFenced(ctx, name)
	return err
}

func (w *lockcoreFencedWorker) Unlock(ctx context.Context, name string) error {
	return notHeld(w.fenced(name).Unlock(ctx, w.owner))
}
