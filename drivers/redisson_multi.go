package drivers

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// RedissonMultiLockWaitPerLock is the wait per lock of a RedissonMultiLock round taken by lock()
// without a lease: a round over n locks may take n times this before it gives up and starts over
// (Redisson's baseWaitTime = locks × 1500 ms).
const RedissonMultiLockWaitPerLock = 1500 * time.Millisecond

// redissonExpireLua sets a lock's lease once a multi-lock with a lease holds every lock, as
// Redisson's expireAsync does (a script, so EVAL on the wire like the rest).
// KEYS[1] lock; ARGV[1] lease ms. Returns 1 if set.
const redissonExpireLua = `return redis.call('pexpire', KEYS[1], ARGV[1])`

// LockMulti implements MultiWorker with Redisson's RedissonMultiLock over one RLock per name:
// lock() runs rounds of tryLock(waitTime) until one holds every lock. A round takes the locks one
// by one in order, each with one EVAL, so the names may lie in any slots of a cluster; each lock
// is waited for up to what is left of the round's wait; when one is not granted the round
// releases what it holds and starts again from the first lock, until the round's wait runs out.
//
// Redisson takes the locks in the order the caller built the multi-lock with; lockbench sorts
// the names, so that two workers taking overlapping sets in different orders never hold one lock
// each while waiting for the other's (a caller giving Redisson one canonical order gets the
// same). waitTime is locks × RedissonMultiLockWaitPerLock without a lease; with one, random in
// [lease/2, lease) when the lease is shorter than that, else in [that, lease), and the locks are
// taken with twice the wait as their lease and set to the lease once all are held (Redisson's
// newLeaseTime and expireAsync).
func (w *redissonWorker) LockMulti(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	w.multi = append(w.multi[:0], names...)
	slices.Sort(w.multi)
	base := time.Duration(len(names)) * RedissonMultiLockWaitPerLock
	lease := w.l.lease
	if w.l.watchdog {
		lease = 0
	}
	for {
		wait := base
		if lease > 0 {
			if lease <= base {
				wait = lease/2 + rand.N(max(lease-lease/2, 1))
			} else {
				wait = base + rand.N(lease-base)
			}
		}
		ok, err := w.tryMulti(ctx, w.multi, wait, lease)
		if err != nil || ok {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// tryMulti is RedissonMultiLock.tryLock(wait, lease) over names in order, lease 0 meaning the
// watchdog's. It reports whether the worker holds every lock; when not, it holds none of them.
func (w *redissonWorker) tryMulti(ctx context.Context, names []string, wait, lease time.Duration) (bool, error) {
	l := w.l
	leaseArg, watchdog := l.leaseArg, l.wd != nil
	if lease > 0 {
		leaseArg, watchdog = msString(2*wait), false
	}
	remain := wait
	start := time.Now()
	held := 0
	for held < len(names) {
		name := names[held]
		ok, err := w.acquire(ctx, redissonChannelName(name), remain, func() (time.Duration, bool, error) {
			return w.try(ctx, name, leaseArg, watchdog)
		})
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, errRedissonClosed) {
				w.unlockAll(ctx, names[:held])
				return false, fmt.Errorf("redisson: multilock %v: %w", names, err)
			}
			// RedissonMultiLock.tryLock takes any exception of a lock's tryLock as "not
			// acquired", and after a response timeout also unlocks that lock, which the
			// unanswered script may have taken (read at redisson-3.23.5, 3.52.0 and 4.7.0).
			if isReplyTimeout(err) {
				_ = w.unlockAll(ctx, []string{name})
			}
			ok = false
		}
		if ok {
			held++
		} else {
			// All or nothing: release, and start over from the first lock while the round's
			// wait lasts.
			w.unlockAll(ctx, names[:held])
			held = 0
		}
		now := time.Now()
		remain -= now.Sub(start)
		start = now
		if remain <= 0 && held < len(names) {
			w.unlockAll(ctx, names[:held])
			return false, nil
		}
	}
	if lease > 0 {
		pipe := l.rdb.Pipeline()
		for _, name := range names {
			pipe.Eval(detach(ctx), redissonExpireLua, []string{name}, msString(lease))
		}
		if _, err := pipe.Exec(detach(ctx)); err != nil {
			w.unlockAll(ctx, names)
			return false, fmt.Errorf("redisson: multilock %v: lease: %w", names, err)
		}
	}
	return true, nil
}

// UnlockMulti implements MultiWorker as RedissonMultiLock.unlock does. Up to 3.27.1 (read at
// redisson-3.23.5 and 3.27.1) it sends every lock's unlock at once and then waits for each in
// turn, failing with the first failure in lock order once all have answered. From 3.27.2 (read
// at redisson-3.27.2, 3.43.0, 3.52.0 and 4.7.0: locks.forEach(Lock::unlock)) it releases them
// one after another and stops at the first failure, leaving the locks after it held.
func (w *redissonWorker) UnlockMulti(ctx context.Context, names []string) error {
	ctx = context.WithoutCancel(ctx)
	if !w.l.profile.multiUnlockParallel {
		for _, name := range names {
			if err := w.Unlock(ctx, name); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.Unlock(ctx, name)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// unlockAll releases one hold of each of names in turn, even when ctx has ended: a failed round
// must not leave locks behind (RedissonMultiLock.unlockInner: each unlock joined before the
// next is sent, failures skipped, at every tag read). The error joins the failures and wraps ErrNotHeld for a lock the
// worker did not hold.
func (w *redissonWorker) unlockAll(ctx context.Context, names []string) error {
	ctx = context.WithoutCancel(ctx)
	var errs []error
	for _, name := range names {
		if err := w.Unlock(ctx, name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
