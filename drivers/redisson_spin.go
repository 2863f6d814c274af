package drivers

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redissonSpinUnlockLua releases one hold of a spin lock: RedissonSpinLock.unlockInnerAsync (read
// at redisson-3.23.0, 3.52.0 and 4.7.0), an RLock's release without the unlock message, as no
// one subscribes. KEYS[1] lock; ARGV[1] lease ms, ARGV[2] owner field. Returns nil when the owner
// does not hold the lock, 0 when holds remain, 1 when released.
const redissonSpinUnlockLua = `
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
redis.call('del', KEYS[1])
return 1`

// The spin lock's scripts as sent; its lock script is the RLock's (RedissonSpinLock.tryLockInnerAsync).
var (
	rsSpinUnlock        = newRedissonScript(redissonSpinUnlockLua)
	rsSpinUnlockLatched = newRedissonScript(withUnlockLatch(redissonSpinUnlockLua))
)

// Redisson's default spin lock back-off (LockOptions.defaults(): ExponentialBackOff, read at
// redisson-3.23.0 and 4.7.0): sleeps from 1 ms, each the last × 2 plus a random 0…fails-1 ms,
// up to 128 ms.
const (
	redissonSpinInitialDelay = time.Millisecond
	redissonSpinMaxDelay     = 128 * time.Millisecond
	redissonSpinMultiplier   = 2
)

// RedissonSpinDriver speaks Redisson's RSpinLock (RedissonSpinLock, getSpinLock(name) with
// LockOptions.defaults()) through go-redis v9 under the profiles and options of RedissonDriver:
// the RLock's hash, scripts and watchdog, but no pub/sub — a waiter sleeps by exponential back-off
// (1 ms doubling to 128 ms, with jitter) between lock scripts — and a release that publishes
// nothing. On a hot lock it trades subscriptions for polling: a benchmark sees more lock scripts
// per acquisition and no channels. The registered driver is the zero value; a
// RedissonSpinDriver value is safe for concurrent use.
type RedissonSpinDriver struct {
	// WatchdogTimeout is as RedissonDriver's.
	WatchdogTimeout time.Duration
	tune            redissonTuning
}

var (
	_ Driver       = RedissonSpinDriver{}
	_ Configurable = RedissonSpinDriver{}
)

func init() { Register(RedissonSpinDriver{}) }

// Name implements Driver.
func (d RedissonSpinDriver) Name() string { return d.tune.name("redisson-spin") }

// Kinds implements Driver.
func (RedissonSpinDriver) Kinds() Kind { return KindMutex | KindReentrant }

// Options implements Configurable: the redisson driver's.
func (RedissonSpinDriver) Options() []Option { return redissonOptions }

// Configure implements Configurable.
func (d RedissonSpinDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	t, err := configureRedisson("redisson-spin", spec, opts)
	if err != nil {
		return nil, err
	}
	d.tune = t
	return d, nil
}

// Open implements Driver. It runs on single, sentinel and cluster; on N independent masters it
// returns an error wrapping ErrUnsupported.
func (d RedissonSpinDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	l, err := openRedisson(ctx, cfg, d.Name(), d.Kinds(), d.WatchdogTimeout, false, d.tune)
	if err != nil {
		return nil, err
	}
	return &redissonSpinLocker{l: l}, nil
}

// redissonSpinLocker is a Redisson client whose workers take RSpinLocks. It forwards to the
// shared redissonLocker, but is not a WaitCountingLocker: its waiters poll, as the polling
// drivers' do.
type redissonSpinLocker struct {
	l *redissonLocker
}

var (
	_ CountingLocker = (*redissonSpinLocker)(nil)
	_ RenewalCounter = (*redissonSpinLocker)(nil)
)

// NewWorker implements Locker.
func (s *redissonSpinLocker) NewWorker() Worker {
	return &redissonSpinWorker{l: s.l, field: s.l.id + ":" + strconv.FormatUint(s.l.owners.Add(1), 10)}
}

// Settings implements Locker.
func (s *redissonSpinLocker) Settings() map[string]string {
	m := s.l.Settings()
	m["lock"] = "RSpinLock (RedissonSpinLock, LockOptions.defaults())"
	m["protocol"] = "Redisson " + s.l.profile.version + " RedissonSpinLock scripts: the RLock's hash and lock script, a release without a message"
	m["waiters"] = "no pub/sub: a lock script after each back-off sleep, 1 ms doubling (plus 0…fails-1 ms) to 128 ms"
	delete(m, "pubsub")
	return m
}

// Close implements Locker.
func (s *redissonSpinLocker) Close() error { return s.l.Close() }

// Counters implements CountingLocker: the spin lock's attempts.
func (s *redissonSpinLocker) Counters() Counters { return s.l.Counters() }

// Renewals implements RenewalCounter.
func (s *redissonSpinLocker) Renewals() int64 { return s.l.Renewals() }

// redissonSpinWorker is one owner of RSpinLocks.
type redissonSpinWorker struct {
	l     *redissonLocker
	field string
	timer *time.Timer
}

// Lock implements Worker: RedissonSpinLock.lock(), a lock script, then back-off sleeps and lock
// scripts until granted or ctx ends.
func (w *redissonSpinWorker) Lock(ctx context.Context, name string) error {
	l := w.l
	if l.closed.Load() {
		return errRedissonClosed
	}
	base := redissonWorker{l: l, field: w.field}
	b := redissonSpinBackOff{next: redissonSpinInitialDelay}
	for {
		_, ok, err := base.try(ctx, name, l.leaseArg, l.wd != nil)
		if err != nil || ok {
			return err
		}
		sleep := b.nextSleep()
		if w.timer == nil {
			w.timer = time.NewTimer(sleep)
		} else {
			w.timer.Reset(sleep)
		}
		select {
		case <-w.timer.C:
		case <-ctx.Done():
			w.timer.Stop()
			return ctx.Err()
		case <-l.subs.done():
			w.timer.Stop()
			return errRedissonClosed
		}
	}
}

// Unlock implements Worker: one hold released, with the unlock latch of 3.24+.
func (w *redissonSpinWorker) Unlock(ctx context.Context, name string) error {
	l := w.l
	var cmd *redis.Cmd
	if l.profile.unlockLatch {
		// evalWriteSyncedNoRetryAsync at redisson-3.43.0 and later.
		cmd = l.unlockCall(detach(ctx), name, rsSpinUnlock, rsSpinUnlockLatched, []string{name}, l.leaseArg, w.field)
	} else {
		// evalWriteAsync at redisson-3.23.0: not through syncedEval, unlike its lock script.
		cmd = l.tr.eval(detach(ctx), false, rsSpinUnlock, []string{name}, l.leaseArg, w.field)
	}
	_, err := cmd.Int64()
	if l.wd != nil {
		l.wd.remove(name, renewLock, w.field)
	}
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("%w: %q is not held by %s", ErrNotHeld, name, w.field)
	}
	if err != nil {
		return fmt.Errorf("redisson: spin unlock %q: %w", name, err)
	}
	return nil
}

// redissonSpinBackOff is LockOptions.ExponentialBackOffPolicy: one per lock call.
type redissonSpinBackOff struct {
	next  time.Duration
	fails int
}

// nextSleep returns the next sleep and moves on: the next is this one × 2 plus a random
// 0…fails-1 ms (fails counted from 1), capped at the maximum.
func (b *redissonSpinBackOff) nextSleep() time.Duration {
	if b.next == redissonSpinMaxDelay {
		return b.next
	}
	d := b.next
	b.fails++
	b.next = min(redissonSpinMaxDelay, d*redissonSpinMultiplier+time.Duration(rand.IntN(b.fails))*time.Millisecond)
	return d
}
