package drivers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// UnsafeDefaultLease is the unsafe driver's lease when the run sets none: short on purpose, so
// that any hold longer than it (--hold 20ms, or the longhold workload) outlives it.
const UnsafeDefaultLease = 10 * time.Millisecond

// UnsafeDriver is a negative control: a lock that is broken on purpose, so that a run of it shows
// that the workloads' checkers can fail. It is SET NX PX with a short lease (UnsafeDefaultLease)
// and no renewal, and its Unlock is a plain DEL that does not check whose key it deletes. A hold
// longer than the lease therefore lets a second worker in, and the first worker's late DEL then
// frees the second worker's lock for a third. Every workload it supports must count violations
// on it when holds exceed the lease. It is never among the default drivers and Names leaves it
// out: users run it by name ("--driver unsafe"). It is safe for concurrent use.
//
// Reentrancy is counted in the worker (a second Lock of a held name adds one without asking
// Redis); read locks are exclusive like write locks; a multilock takes its names one by one in
// sorted order. None of it is made safe by that: the lease still runs out under the holder.
type UnsafeDriver struct{}

var _ Driver = UnsafeDriver{}

func init() { RegisterControl(UnsafeDriver{}) }

// Name implements Driver.
func (UnsafeDriver) Name() string { return "unsafe" }

// Kinds implements Driver: every kind a workload exercises, so each workload's checker can be
// shown to catch it. Not fair and not fenced: those are properties it would only fake.
func (UnsafeDriver) Kinds() Kind { return KindMutex | KindReentrant | KindRW | KindMulti }

// Open implements Driver. It runs on single, sentinel and cluster.
func (UnsafeDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	t, err := singleNodeTopology(cfg, "unsafe")
	if err != nil {
		return nil, err
	}
	rdb, err := openGoRedis(ctx, cfg, t, 0)
	if err != nil {
		return nil, fmt.Errorf("unsafe: %w", err)
	}
	lease := cfg.Lease
	if lease <= 0 {
		lease = UnsafeDefaultLease
	}
	return &unsafeLocker{rdb: rdb, topology: t, lease: lease, prefix: uuid.NewString() + ":"}, nil
}

type unsafeLocker struct {
	rdb      redis.UniversalClient
	topology string
	lease    time.Duration
	prefix   string
	workers  atomic.Uint64
}

func (l *unsafeLocker) NewWorker() Worker {
	id := l.workers.Add(1)
	return &unsafeWorker{l: l, token: l.prefix + strconv.FormatUint(id, 10), held: map[string]int64{}}
}

func (l *unsafeLocker) Settings() map[string]string {
	return map[string]string{
		"client":   "go-redis " + redis.Version(),
		"topology": l.topology,
		"lease":    l.lease.String() + " (no renewal)",
		"release":  "DEL without checking the token",
		"purpose":  "NEGATIVE CONTROL: broken on purpose; the checkers must count violations",
	}
}

func (l *unsafeLocker) Close() error { return l.rdb.Close() }

// unsafeWorker holds one token for its life and counts its holds per name locally.
type unsafeWorker struct {
	l     *unsafeLocker
	token string
	held  map[string]int64
	sleep *time.Timer
}

var (
	_ RWWorker    = (*unsafeWorker)(nil)
	_ MultiWorker = (*unsafeWorker)(nil)
	_ HoldCounter = (*unsafeWorker)(nil)
)

func (w *unsafeWorker) Lock(ctx context.Context, name string) error {
	if n := w.held[name]; n > 0 {
		w.held[name] = n + 1
		return nil
	}
	attempt := detach(ctx)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ok, err := w.l.rdb.SetNX(attempt, name, w.token, w.l.lease).Result()
		if err != nil {
			return err
		}
		if ok {
			w.held[name] = 1
			return nil
		}
		if err := sleepCtx(ctx, &w.sleep, NaiveRetryDelay); err != nil {
			return err
		}
	}
}

// Unlock deletes the key whoever holds it now: the bug this driver exists for.
func (w *unsafeWorker) Unlock(ctx context.Context, name string) error {
	n := w.held[name]
	if n == 0 {
		return fmt.Errorf("%w: %q", ErrNotHeld, name)
	}
	if n > 1 {
		w.held[name] = n - 1
		return nil
	}
	delete(w.held, name)
	return w.l.rdb.Del(detach(ctx), name).Err()
}

// RLock implements RWWorker: a read hold is the same exclusive, expiring lock.
func (w *unsafeWorker) RLock(ctx context.Context, name string) error { return w.Lock(ctx, name) }

// RUnlock implements RWWorker.
func (w *unsafeWorker) RUnlock(ctx context.Context, name string) error { return w.Unlock(ctx, name) }

// LockMulti implements MultiWorker, one name after another in sorted order (so two multilocks
// cannot deadlock), giving back what it took when one fails.
func (w *unsafeWorker) LockMulti(ctx context.Context, names []string) error {
	sorted := slices.Sorted(slices.Values(names))
	for i, n := range sorted {
		if err := w.Lock(ctx, n); err != nil {
			for _, taken := range sorted[:i] {
				_ = w.Unlock(ctx, taken)
			}
			return err
		}
	}
	return nil
}

// UnlockMulti implements MultiWorker.
func (w *unsafeWorker) UnlockMulti(ctx context.Context, names []string) error {
	var first error
	for _, n := range names {
		if err := w.Unlock(ctx, n); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// HoldCount implements HoldCounter: the local count while the key still holds this worker's
// token in Redis, else 0 (the lease ran out, or another worker's DEL removed it).
func (w *unsafeWorker) HoldCount(ctx context.Context, name string) (int64, error) {
	v, err := w.l.rdb.Get(detach(ctx), name).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, nil
	case err != nil:
		return 0, err
	case v != w.token:
		return 0, nil
	}
	return w.held[name], nil
}
