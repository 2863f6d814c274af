package drivers

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/lockcore"
)

// LockcoreFairDriver is lockcore's fair lock (Redisson's RedissonFairLock protocol): Lock queues
// behind earlier waiters and is granted in arrival order, each waiter woken on its own channel.
// It runs on single, sentinel and cluster. Of lockcore's options it takes sync= (the others
// tune the Mutex's local queue and batching, which the fair lock does not use). It is safe for
// concurrent use.
type LockcoreFairDriver struct {
	spec string
	tune lockcoreTuning
}

var (
	_ Driver       = LockcoreFairDriver{}
	_ Configurable = LockcoreFairDriver{}
)

func init() { Register(LockcoreFairDriver{}) }

// Name implements Driver.
func (d LockcoreFairDriver) Name() string {
	if d.spec != "" {
		return d.spec
	}
	return "lockcore-fair"
}

// Options implements Configurable.
func (LockcoreFairDriver) Options() []Option { return []Option{lockcoreSyncOption} }

// Configure implements Configurable.
func (d LockcoreFairDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	t := d.tune
	if v, ok := opts["sync"]; ok {
		var err error
		if t.sync, err = parseSync(v); err != nil {
			return nil, fmt.Errorf("%w: lockcore-fair option sync=%s: %v", ErrBadOption, v, err)
		}
	}
	return LockcoreFairDriver{spec: spec, tune: t}, nil
}

// Kinds implements Driver.
func (LockcoreFairDriver) Kinds() Kind { return KindMutex | KindReentrant | KindFair }

// Open implements Driver. On N independent masters it returns an error wrapping ErrUnsupported.
func (d LockcoreFairDriver) Open(_ context.Context, cfg Config) (Locker, error) {
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
	return &lockcoreFairLocker{b}, nil
}

type lockcoreFairLocker struct{ *lockcoreBase }

func (l *lockcoreFairLocker) NewWorker() Worker {
	return &lockcoreFairWorker{c: l.c, owner: l.c.NewOwner(), lease: l.lease}
}

func (l *lockcoreFairLocker) Settings() map[string]string {
	s := l.settings("FairMutex (Redisson RedissonFairLock)")
	s["waiters"] = "FIFO queue, one wake-up channel per waiter"
	s["fair_wait_time"] = lockcore.DefaultFairWaitTime.String()
	return s
}

// lockcoreFairWorker keeps the FairMutex of its last lock, like lockcoreWorker.
type lockcoreFairWorker struct {
	c     *lockcore.Client
	owner lockcore.Owner
	lease time.Duration
	last  *lockcore.FairMutex
}

func (w *lockcoreFairWorker) fair(name string) *lockcore.FairMutex {
	if w.last == nil || w.last.Name() != name {
		w.last = w.c.FairMutex(name, lockcore.FairMutexOptions{})
	}
	return w.last
}

func (w *lockcoreFairWorker) Lock(ctx context.Context, name string) error {
	if w.lease > 0 {
		return w.fair(name).LockLease(ctx, w.owner, w.lease)
	}
	return w.fair(name).Lock(ctx, w.owner)
}

func (w *lockcoreFairWorker) Unlock(ctx context.Context, name string) error {
	return notHeld(w.fair(name).Unlock(ctx, w.owner))
}
