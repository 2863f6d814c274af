package drivers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/lockcore"
)

// LockcoreDriver runs lockbench's own engine: Redisson's RLock protocol over rueidis with
// EVALSHA, auto-pipelining, coalesced waiters and a batched watchdog.
type LockcoreDriver struct{}

var _ Driver = LockcoreDriver{}

func init() { Register(LockcoreDriver{}) }

// Name implements Driver.
func (LockcoreDriver) Name() string { return "lockcore" }

// Kinds implements Driver.
func (LockcoreDriver) Kinds() Kind { return KindMutex | KindReentrant }

// Open implements Driver. It runs on single, sentinel and cluster; on N independent masters it
// returns an error wrapping ErrUnsupported (lockcore has no RedLock mode yet).
func (LockcoreDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	t, err := singleNodeTopology(cfg, "lockcore")
	if err != nil {
		return nil, err
	}
	ro, err := rueidisOption(cfg, t)
	if err != nil {
		return nil, err
	}
	c, err := lockcore.New(lockcore.Options{Redis: ro})
	if err != nil {
		return nil, fmt.Errorf("lockcore: connect to %s %v: %w", t, cfg.Addrs, err)
	}
	return &lockcoreLocker{c: c, topology: t, lease: cfg.Lease}, nil
}

type lockcoreLocker struct {
	c        *lockcore.Client
	topology string
	lease    time.Duration
}

func (l *lockcoreLocker) NewWorker() Worker {
	return &lockcoreWorker{c: l.c, owner: l.c.NewOwner(), lease: l.lease}
}

func (l *lockcoreLocker) Settings() map[string]string {
	lease := lockcore.DefaultLeaseTime.String() + " renewed by the watchdog"
	if l.lease > 0 {
		lease = l.lease.String()
	}
	return map[string]string{
		"client":          "rueidis " + moduleVersion("github.com/redis/rueidis") + " auto-pipelining",
		"topology":        l.topology,
		"max_flush_delay": lockcore.DefaultMaxFlushDelay.String(),
		"lease":           lease,
		"scripts":         "EVALSHA",
		"waiters":         "coalesced, one subscription per lock",
		"renewals":        "batched, one pipeline per watchdog tick",
	}
}

func (l *lockcoreLocker) Close() error {
	l.c.Close()
	return nil
}

// lockcoreWorker keeps the Mutex of its last lock so that the usual lock-then-unlock of one
// name builds the handle once.
type lockcoreWorker struct {
	c     *lockcore.Client
	owner lockcore.Owner
	lease time.Duration
	last  *lockcore.Mutex
}

func (w *lockcoreWorker) mutex(name string) *lockcore.Mutex {
	if w.last == nil || w.last.Name() != name {
		w.last = w.c.Mutex(name)
	}
	return w.last
}

func (w *lockcoreWorker) Lock(ctx context.Context, name string) error {
	if w.lease > 0 {
		return w.mutex(name).LockLease(ctx, w.owner, w.lease)
	}
	return w.mutex(name).Lock(ctx, w.owner)
}

func (w *lockcoreWorker) Unlock(ctx context.Context, name string) error {
	err := w.mutex(name).Unlock(ctx, w.owner)
	if errors.Is(err, lockcore.ErrNotOwner) {
		return fmt.Errorf("%w: %v", ErrNotHeld, err)
	}
	return err
}
