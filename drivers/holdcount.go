package drivers

import (
	"context"
	"errors"

	"github.com/lockbench/lockbench/internal/lockhooks"
	"github.com/lockbench/lockbench/lockcore"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// HoldCounter is a Worker that can read from Redis how many holds it has of a lock. The
// reentrancy workload checks the count at every nesting level with it, and the longhold workload
// checks, before it releases, that the lock is still its own: a count of 0 then is a lease lost
// while held. Drivers whose workers do not implement it are run without those checks (the
// result says so). Not safe for concurrent use, like Worker.
type HoldCounter interface {
	Worker
	// HoldCount returns how many times this worker holds name according to Redis: 0 when the
	// key is gone or belongs to someone else. It does not change the lock.
	HoldCount(ctx context.Context, name string) (int64, error)
}

// RenewalCounter is a Locker that counts the lease renewals its watchdog sent (successful ones),
// from Open: the longhold workload reports renewals per acquisition from it. Implementations
// are safe for concurrent use.
type RenewalCounter interface {
	Locker
	// Renewals returns the renewals so far.
	Renewals() int64
}

var (
	_ HoldCounter    = (*lockcoreWorker)(nil)
	_ HoldCounter    = (*lockcoreFairWorker)(nil)
	_ HoldCounter    = (*lockcoreFencedWorker)(nil)
	_ HoldCounter    = (*redissonWorker)(nil)
	_ HoldCounter    = (*redissonFairWorker)(nil)
	_ HoldCounter    = (*naiveWorker)(nil)
	_ RenewalCounter = (*lockcoreLocker)(nil)
	_ RenewalCounter = (*lockcoreFairLocker)(nil)
	_ RenewalCounter = (*lockcoreFencedLocker)(nil)
	_ RenewalCounter = (*redissonLocker)(nil)
)

// lockcoreHoldCount reads field of the lock hash name: the count Redisson's protocol keeps there
// (nil when the key or the field is gone).
func lockcoreHoldCount(ctx context.Context, c *lockcore.Client, name, field string) (int64, error) {
	rdb := c.Redis()
	n, err := rdb.Do(detach(ctx), rdb.B().Hget().Key(name).Field(field).Build()).AsInt64()
	if rueidis.IsRedisNil(err) {
		return 0, nil
	}
	return n, err
}

// HoldCount implements HoldCounter. A Mutex handed over inside the process is counted under the
// field of the owner that took it through Redis: the hold table says which.
func (w *lockcoreWorker) HoldCount(ctx context.Context, name string) (int64, error) {
	field, _ := lockhooks.HoldField(w.mutex(name), w.owner)
	return lockcoreHoldCount(ctx, w.c, name, field)
}

// HoldCount implements HoldCounter.
func (w *lockcoreFairWorker) HoldCount(ctx context.Context, name string) (int64, error) {
	return lockcoreHoldCount(ctx, w.c, name, w.owner.Field())
}

// HoldCount implements HoldCounter.
func (w *lockcoreFencedWorker) HoldCount(ctx context.Context, name string) (int64, error) {
	return lockcoreHoldCount(ctx, w.c, name, w.owner.Field())
}

// Renewals implements RenewalCounter for the lockcore drivers on one deployment: the lockcore
// watchdog's renewals.
func (b *lockcoreBase) Renewals() int64 { return lockhooks.Renewals(b.c) }

// HoldCount implements HoldCounter: the owner field of the RLock hash.
func (w *redissonWorker) HoldCount(ctx context.Context, name string) (int64, error) {
	n, err := w.l.rdb.HGet(detach(ctx), name, w.field).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// HoldCount implements HoldCounter: the fair lock keeps its holds in an RLock hash too.
func (fw *redissonFairWorker) HoldCount(ctx context.Context, name string) (int64, error) {
	return fw.base.HoldCount(ctx, name)
}

// Renewals implements RenewalCounter: the renewals the per-lock timers sent; 0 with an explicit
// lease (no watchdog).
func (l *redissonLocker) Renewals() int64 {
	if l.wd == nil {
		return 0
	}
	return l.wd.renewals.Load()
}

// HoldCount implements HoldCounter: 1 while the key holds this acquisition's token, else 0.
func (w *naiveWorker) HoldCount(ctx context.Context, name string) (int64, error) {
	token, ok := w.held[name]
	if !ok {
		return 0, nil
	}
	v, err := w.l.rdb.Get(detach(ctx), name).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, nil
	case err != nil:
		return 0, err
	case v != token:
		return 0, nil
	}
	return 1, nil
}
