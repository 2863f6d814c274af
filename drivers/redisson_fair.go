package drivers

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedissonFairThreadWaitTime is RedissonFairLock's threadWaitTime, 5 minutes by default: how
// long a queued waiter may go without retrying before the others drop it as dead; each waiter's
// deadline is the one's ahead of it plus this. (lockcore's DefaultFairWaitTime is 5 s: a waiter
// that died holds a Redisson queue up for 5 minutes. The option fair_wait sets it.)
const RedissonFairThreadWaitTime = 300 * time.Second

// redissonFairLockLua32 is the fair lock script of Redisson 3.32+: a waiter already queued is told
// to retry after max(0, the lock's PTTL) rather than after the time left of the waiter ahead.
var redissonFairLockLua32 = strings.Replace(redissonFairLockLua,
	"  return tonumber(mine) - tonumber(ARGV[3]) - tonumber(ARGV[4])",
	"  return math.max(0, redis.call('pttl', KEYS[1]))", 1)

// redissonFairLockLua52 is the fair lock script of Redisson 3.52+ (read at redisson-3.52.0 and
// 4.7.0; not at 3.43.0): a new waiter queues behind the last one only if the last still has a
// deadline, else after the lock's PTTL.
var redissonFairLockLua52 = strings.Replace(redissonFairLockLua32,
	"if last ~= false and last ~= ARGV[2] then",
	"if last ~= false and last ~= ARGV[2] and redis.call('zscore', KEYS[3], last) ~= false then", 1)

// keepUndated turns a 3.23 fair script into its 3.43+ form, whose stale-waiter loop stops at a
// head without a deadline and keeps it (`timeout ~= false and …`, read at redisson-3.43.0,
// 3.52.0 and 4.7.0): such a waiter then blocks the queue until removed.
func keepUndated(body string) string {
	return strings.Replace(body, "  if due <= tonumber(ARGV[4]) then", "  if due ~= nil and due <= tonumber(ARGV[4]) then", 1)
}

// The fair lock's scripts as sent.
var (
	rsFairLock          = newRedissonScript(redissonFairLockLua)
	rsFairLock32        = newRedissonScript(keepUndated(redissonFairLockLua32))
	rsFairLock52        = newRedissonScript(keepUndated(redissonFairLockLua52))
	rsFairUnlock        = newRedissonScript(redissonFairUnlockLua)
	rsFairUnlockLatched = newRedissonScript(withUnlockLatch(keepUndated(redissonFairUnlockLua)))
	rsFairLeave         = newRedissonScript(redissonFairLeaveLua)
)

// The RedissonFairLock scripts, written for lockbench with the semantics, key layout and replies
// of Redisson 3.22–3.43, so that lockcore's FairMutex and this driver share a queue. Besides the
// lock hash (an RLock's), a fair lock has a list of waiting owner fields in arrival order
// (KEYS[2], redisson_lock_queue:{name}) and a sorted set of their deadlines in Unix ms (KEYS[3],
// redisson_lock_timeout:{name}). Times are the client's wall clock, ARGV[4], as Redisson sends.

// redissonFairDropStale removes waiters at the head of the queue whose deadline has passed, as
// RedissonFairLock 3.23 does: a head without a deadline fails the script (tonumber(false) is
// nil, and nil <= a number is an error; read at redisson-3.23.0).
const redissonFairDropStale = `
while true do
  local head = redis.call('lindex', KEYS[2], 0)
  if head == false then break end
  local due = tonumber(redis.call('zscore', KEYS[3], head))
  if due <= tonumber(ARGV[4]) then
    redis.call('zrem', KEYS[3], head)
    redis.call('lpop', KEYS[2])
  else
    break
  end
end
`

// redissonFairLockLua takes the lock if it is free and the owner is first in line (leaving the
// queue, every other waiter's deadline moving one wait earlier), re-enters it, or queues the
// owner with a deadline one wait after the waiter ahead's (or the lock's expiry).
// KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts; ARGV[1] lease ms, ARGV[2] owner field, ARGV[3]
// wait ms, ARGV[4] now. Returns nil when held, else how long in ms the one ahead has left.
const redissonFairLockLua = redissonFairDropStale + `
if redis.call('exists', KEYS[1]) == 0 and (redis.call('exists', KEYS[2]) == 0 or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  for _, waiter in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
    redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), waiter)
  end
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
local mine = redis.call('zscore', KEYS[3], ARGV[2])
if mine ~= false then
  return tonumber(mine) - tonumber(ARGV[3]) - tonumber(ARGV[4])
end
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last ~= false and last ~= ARGV[2] then
  ttl = tonumber(redis.call('zscore', KEYS[3], last)) - tonumber(ARGV[4])
else
  ttl = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl`

// redissonFairUnlockLua releases one hold; a full release wakes the first waiter only, on its
// own channel KEYS[4] .. ':' .. <field>.
// KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] the lock's unlock channel; ARGV[1]
// unlock message, ARGV[2] lease ms, ARGV[3] owner field, ARGV[4] now, ARGV[5] publish command.
// Returns nil when the owner does not hold the lock, 0 when holds remain, 1 when released — and
// 1 for a lock that is gone, whose first waiter is woken: RedissonFairLock.unlockInnerAsync
// answers a missing lock as released (read at redisson-3.23.0, 3.43.0, 3.52.0 and 4.7.0), so the
// caller gets no IllegalMonitorStateException.
const redissonFairUnlockLua = redissonFairDropStale + `
if redis.call('exists', KEYS[1]) == 0 then
  local first = redis.call('lindex', KEYS[2], 0)
  if first ~= false then
    redis.call(ARGV[5], KEYS[4] .. ':' .. first, ARGV[1])
  end
  return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
local first = redis.call('lindex', KEYS[2], 0)
if first ~= false then
  redis.call(ARGV[5], KEYS[4] .. ':' .. first, ARGV[1])
end
return 1`

// redissonFairLeaveLua takes a waiter that gave up out of the queue; those behind it move up a
// place, their deadlines one wait earlier (Redisson's acquireFailedAsync).
// KEYS[1] queue, KEYS[2] timeouts; ARGV[1] owner field, ARGV[2] wait ms.
const redissonFairLeaveLua = `
local queue = redis.call('lrange', KEYS[1], 0, -1)
local i = 1
while i <= #queue and queue[i] ~= ARGV[1] do i = i + 1 end
for j = i + 1, #queue do
  redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), queue[j])
end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('lrem', KEYS[1], 0, ARGV[1])
return 0`

// RedissonFairDriver speaks Redisson's RedissonFairLock protocol through go-redis v9 as a
// Redisson client of one release with default settings does (the profiles and options of
// RedissonDriver, threadWaitTime RedissonFairThreadWaitTime): Lock queues behind earlier waiters and is granted in arrival order, each
// waiter subscribed to its own channel and woken alone by the release before it. It shares keys,
// fields and values with lockcore's FairMutex (driver lockcore-fair), so the two queue together.
// The registered driver is the zero value; a RedissonFairDriver value is safe for concurrent use.
type RedissonFairDriver struct {
	// WatchdogTimeout is as RedissonDriver's.
	WatchdogTimeout time.Duration
	tune            redissonTuning
}

var (
	_ Driver       = RedissonFairDriver{}
	_ Configurable = RedissonFairDriver{}
)

func init() { Register(RedissonFairDriver{}) }

// Name implements Driver.
func (d RedissonFairDriver) Name() string { return d.tune.name("redisson-fair") }

// Options implements Configurable: the redisson driver's.
func (RedissonFairDriver) Options() []Option { return redissonOptions }

// Configure implements Configurable.
func (d RedissonFairDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	t, err := configureRedisson("redisson-fair", spec, opts)
	if err != nil {
		return nil, err
	}
	d.tune = t
	return d, nil
}

// Kinds implements Driver.
func (RedissonFairDriver) Kinds() Kind { return KindMutex | KindReentrant | KindFair }

// Open implements Driver. It runs on single, sentinel and cluster; on N independent masters it
// returns an error wrapping ErrUnsupported.
func (d RedissonFairDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	return openRedisson(ctx, cfg, d.Name(), d.Kinds(), d.WatchdogTimeout, true, d.tune)
}

// redissonFairWorker is an owner whose Lock and Unlock are a RedissonFairLock's. It keeps its
// redissonWorker unexported, so that it has no LockMulti: redisson-fair has no multi kind.
type redissonFairWorker struct {
	base redissonWorker
}

// Lock takes the fair lock, queueing with threadWaitTime. A waiter whose ctx ends leaves the
// queue, as Redisson's tryLock does when its wait runs out, so that it does not hold up those
// behind it until its deadline.
func (fw *redissonFairWorker) Lock(ctx context.Context, name string) error {
	w := &fw.base
	l := w.l
	keys := []string{name, redissonFairQueueName(name), redissonFairTimeoutName(name)}
	waitArg := strconv.FormatInt(l.fairWait, 10)
	_, err := w.acquire(ctx, redissonChannelName(name)+":"+w.field, -1, func() (time.Duration, bool, error) {
		now := strconv.FormatInt(time.Now().UnixMilli(), 10)
		sc := rsFairLock
		switch {
		case l.profile.fairLastGuard:
			sc = rsFairLock52
		case l.profile.fairRetryNonNegative:
			sc = rsFairLock32
		}
		// A WAIT shortfall runs RedissonFairLock's unlockInnerAsync and the attempt again, as
		// for an RLock: the fair lock inherits RedissonLock.tryAcquireAsync0 (handleNoSync).
		ms, err := l.lockSynced(ctx, func() *redis.Cmd {
			return l.tr.eval(detach(ctx), true, sc, keys, l.leaseArg, w.field, waitArg, now)
		}, func() {
			l.unlockSend(detach(ctx), false, name, rsFairUnlock, rsFairUnlockLatched,
				[]string{name, redissonFairQueueName(name), redissonFairTimeoutName(name), redissonChannelName(name)},
				redissonUnlockMessage, l.leaseArg, w.field, strconv.FormatInt(time.Now().UnixMilli(), 10), l.publish)
		}).Int64()
		if errors.Is(err, redis.Nil) {
			if l.wd != nil {
				l.wd.add(name, renewLock, w.field)
			}
			return 0, true, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("redisson: fair lock %q: %w", name, err)
		}
		if ms < 0 && l.profile.fairRetryNonNegative {
			ms = 0 // 3.32+: retry at once rather than wait for a message only
		}
		return time.Duration(ms) * time.Millisecond, false, nil
	})
	if err != nil {
		fw.leave(ctx, keys[1:], waitArg)
	}
	return err
}

// The 4.x defaults the fair leave's retries follow (config.BaseConfig at redisson-4.7.0).
const (
	redissonFairLeaveRetries = 4               // retryAttempts
	redissonFairLeaveTimeout = 3 * time.Second // timeout: how long one attempt may wait for its reply
)

// leave takes the worker out of the fair queue after it gave up (acquireFailedAsync): through
// syncedEval from 3.43, sent again after a failure from 4.0 (syncedEvalWithRetry: retryAttempts
// 4, each after EqualJitterDelay's 1–2 s), else once.
func (fw *redissonFairWorker) leave(ctx context.Context, keys []string, waitArg string) {
	l := fw.base.l
	p := l.profile
	attempts, bound := 1, RedissonSubscribeTimeout
	if p.fairLeaveRetry {
		attempts, bound = 1+redissonFairLeaveRetries, time.Duration(1+redissonFairLeaveRetries)*(redissonFairLeaveTimeout+2*time.Second)
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
	defer cancel()
	for i := range attempts {
		if i > 0 {
			select {
			case <-time.After(time.Second + time.Duration(mrand.Int64N(int64(time.Second)+1))):
			case <-lctx.Done():
				return
			case <-l.subs.done():
				return
			}
		}
		err := l.tr.eval(lctx, p.fairLeaveSynced, rsFairLeave, keys, fw.base.field, waitArg).Err()
		var rerr redis.Error
		if err == nil || errors.As(err, &rerr) {
			return // done, or an error reply, which Redisson does not retry
		}
	}
}

// Unlock releases one hold of the fair lock; the last one wakes the first waiter.
func (fw *redissonFairWorker) Unlock(ctx context.Context, name string) error {
	w := &fw.base
	l := w.l
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	_, err := l.unlockCall(detach(ctx), name, rsFairUnlock, rsFairUnlockLatched,
		[]string{name, redissonFairQueueName(name), redissonFairTimeoutName(name), redissonChannelName(name)},
		redissonUnlockMessage, l.leaseArg, w.field, now, l.publish).Int64()
	if l.wd != nil {
		l.wd.remove(name, renewLock, w.field)
	}
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("%w: %q is not held by %s", ErrNotHeld, name, w.field)
	}
	if err != nil {
		return fmt.Errorf("redisson: fair unlock %q: %w", name, err)
	}
	return nil
}

// redissonFairQueueName is the fair lock's queue, "redisson_lock_queue:{name}".
func redissonFairQueueName(name string) string { return redissonPrefixed("redisson_lock_queue", name) }

// redissonFairTimeoutName is the fair lock's deadlines, "redisson_lock_timeout:{name}".
func redissonFairTimeoutName(name string) string {
	return redissonPrefixed("redisson_lock_timeout", name)
}

// redissonPrefixed is Redisson's prefixName: prefix and the name in a hash tag, unless the name
// has one already, so that the helper key lives in the lock's slot.
func redissonPrefixed(prefix, name string) string {
	if strings.Contains(name, "{") {
		return prefix + ":" + name
	}
	return prefix + ":{" + name + "}"
}
