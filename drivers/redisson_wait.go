package drivers

import (
	"context"
	"errors"
	"net"
	"time"
)

// redissonAttempt runs one lock script. It reports whether the worker now holds the lock, and
// otherwise how long to sleep at most before the next attempt (negative: until a message).
type redissonAttempt func() (ttl time.Duration, ok bool, err error)

// acquire is Redisson's acquisition loop, shared by every lock kind the driver speaks (the
// RLock's lock and tryLock, the read and write locks, the fair lock): one attempt; if it fails,
// join the waiters on channel and wait for the subscription; then attempt again after each
// wake-up message or after the TTL the attempt returned, whichever comes first.
//
// With wait negative it waits until ctx ends (lock()); a subscription not in place within the
// subscribe timeout is an error wrapping ErrRedissonSubscribeTimeout. Otherwise it gives up after wait (tryLock(wait)), and
// reports false, not an error, when wait runs out, the subscription included.
func (w *redissonWorker) acquire(ctx context.Context, channel string, wait time.Duration, attempt redissonAttempt) (bool, error) {
	l := w.l
	if l.closed.Load() {
		return false, errRedissonClosed
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var deadline time.Time
	if wait >= 0 {
		deadline = time.Now().Add(wait)
	}
	// The first attempt's TTL is not waited on: Redisson subscribes first and tries again.
	_, ok, err := attempt()
	if err != nil || ok {
		return ok, err
	}
	if wait >= 0 && time.Until(deadline) <= 0 {
		return false, nil
	}
	e, err := l.subs.subscribe(ctx, channel, deadline)
	if err != nil {
		if wait >= 0 && (errors.Is(err, errRedissonWaitOver) || errors.Is(err, ErrRedissonSubscribeTimeout)) {
			return false, nil // tryLock logs a failed subscription and returns false
		}
		return false, err
	}
	defer l.subs.unsubscribe(e)
	// Redisson waits for the subscription before it tries again, so that a release between its
	// attempt and the SUBSCRIBE is not missed. The subscription bounds its own wait by the
	// subscribe timeout; a tryLock's wait may end it sooner.
	var bound <-chan time.Time
	if wait >= 0 {
		if w.timer == nil {
			w.timer = time.NewTimer(time.Until(deadline))
		} else {
			w.timer.Reset(time.Until(deadline))
		}
		bound = w.timer.C
	}
	select {
	case <-e.done:
		if w.timer != nil {
			w.timer.Stop()
		}
		if e.err != nil {
			if wait >= 0 && errors.Is(e.err, ErrRedissonSubscribeTimeout) {
				return false, nil // tryLock logs a failed subscription and returns false
			}
			return false, e.err
		}
	case <-bound:
		return false, nil
	case <-ctx.Done():
		if w.timer != nil {
			w.timer.Stop()
		}
		return false, ctx.Err()
	case <-l.subs.done():
		if w.timer != nil {
			w.timer.Stop()
		}
		return false, errRedissonClosed
	}
	stats := &l.subs.stats
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		ttl, ok, err := attempt()
		if err != nil && wait >= 0 && l.profile.tryLockTimeoutFalse && isReplyTimeout(err) {
			// Redisson 4.7's tryLock logs a RedisResponseTimeoutException in its wait loop and
			// returns false (RedissonLock.tryLock at redisson-4.7.0; not at 4.6.1).
			return false, nil
		}
		if err != nil || ok {
			return ok, err
		}
		// Sleep until a permit (a wake-up message) or the TTL. A lock without a TTL (not one of
		// ours) gives no bound: Redisson then waits for a message only, or for what is left of
		// a tryLock's wait.
		sleep := ttl
		if wait >= 0 {
			left := time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
			if sleep < 0 || sleep > left {
				sleep = left
			}
		}
		var expired <-chan time.Time
		if sleep >= 0 {
			if w.timer == nil {
				w.timer = time.NewTimer(sleep)
			} else {
				w.timer.Reset(sleep)
			}
			expired = w.timer.C
		}
		e.blocked.Add(1)
		select {
		case <-e.latch:
			stats.woken.Add(1)
		case <-expired:
			stats.timed.Add(1)
		case <-ctx.Done():
		case <-l.subs.done():
			e.blocked.Add(-1)
			if w.timer != nil {
				w.timer.Stop()
			}
			return false, errRedissonClosed
		}
		e.blocked.Add(-1)
		if w.timer != nil {
			w.timer.Stop()
		}
	}
}

// isReplyTimeout reports whether err is a command that got no reply within the reply timeout
// (Redisson's RedisResponseTimeoutException), not the caller's context ending.
func isReplyTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, context.DeadlineExceeded)
}
