package drivers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The RFencedLock scripts (RedissonFencedLock, the same at redisson-3.23.0, 3.43.0, 3.52.0 and
// 4.7.0): an RLock's, plus an INCR of the token key redisson_lock_token:{name} with every grant,
// reentrant ones included. KEYS[1] lock, KEYS[2] token key; ARGV[1] lease ms, ARGV[2] owner field.

// redissonFencedTokenLua is lockAndGetToken's script (tryLockInnerAsync(lease, unit, threadId)):
// returns {-1, token} when granted, else {the lock's PTTL, -1}.
const redissonFencedTokenLua = `
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local token = redis.call('incr', KEYS[2])
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}`

// redissonFencedLockLua is lock()'s script (tryLockInnerAsync with a command): the same grant,
// the token counted but not returned; nil when granted, else the lock's PTTL.
const redissonFencedLockLua = `
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('incr', KEYS[2])
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])`

// The fenced lock's scripts as sent; it releases with the RLock's unlock script (RedissonLock).
var (
	rsFencedToken = newRedissonScript(redissonFencedTokenLua)
	rsFencedLock  = newRedissonScript(redissonFencedLockLua)
)

// RedissonFencedDriver speaks Redisson's RFencedLock (RedissonFencedLock, getFencedLock(name))
// through go-redis v9 under the profiles and options of RedissonDriver: an RLock whose every
// grant also increments redisson_lock_token:{name}; LockFenced is lockAndGetToken() and returns
// that token, Lock is lock(). Waiting, release, watchdog and pub/sub are the RLock's. Its token
// key is lockcore-fenced's, so the two share a token sequence. The registered driver is the
// zero value; a RedissonFencedDriver value is safe for concurrent use.
type RedissonFencedDriver struct {
	// WatchdogTimeout is as RedissonDriver's.
	WatchdogTimeout time.Duration
	tune            redissonTuning
}

var (
	_ Driver       = RedissonFencedDriver{}
	_ Configurable = RedissonFencedDriver{}
)

func init() { Register(RedissonFencedDriver{}) }

// Name implements Driver.
func (d RedissonFencedDriver) Name() string { return d.tune.name("redisson-fenced") }

// Kinds implements Driver.
func (RedissonFencedDriver) Kinds() Kind { return KindMutex | KindReentrant | KindFenced }

// Options implements Configurable: the redisson driver's.
func (RedissonFencedDriver) Options() []Option { return redissonOptions }

// Configure implements Configurable.
func (d RedissonFencedDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	t, err := configureRedisson("redisson-fenced", spec, opts)
	if err != nil {
		return nil, err
	}
	d.tune = t
	return d, nil
}

// Open implements Driver. It runs on single, sentinel and cluster; on N independent masters it
// returns an error wrapping ErrUnsupported.
func (d RedissonFencedDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	l, err := openRedisson(ctx, cfg, d.Name(), d.Kinds(), d.WatchdogTimeout, false, d.tune)
	if err != nil {
		return nil, err
	}
	return &redissonFencedLocker{redissonLocker: l}, nil
}

// redissonFencedLocker is a Redisson client whose workers take RFencedLocks; the rest (counters,
// renewals, wait statistics, Close) is the RLock client's.
type redissonFencedLocker struct {
	*redissonLocker
}

// NewWorker implements Locker.
func (l *redissonFencedLocker) NewWorker() Worker {
	return &redissonFencedWorker{base: *l.redissonLocker.NewWorker().(*redissonWorker)}
}

// Settings implements Locker.
func (l *redissonFencedLocker) Settings() map[string]string {
	m := l.redissonLocker.Settings()
	m["lock"] = "RFencedLock (RedissonFencedLock): lockAndGetToken for fenced grants, lock() otherwise"
	m["protocol"] = "Redisson " + l.profile.version + " RedissonFencedLock scripts: the RLock's hash, INCR of redisson_lock_token:{name} with every grant"
	return m
}

// redissonFencedWorker is one owner of RFencedLocks. It keeps its redissonWorker unexported, so
// that it has no LockMulti.
type redissonFencedWorker struct {
	base redissonWorker
}

var _ FencedWorker = (*redissonFencedWorker)(nil)

// LockFenced implements FencedWorker: lockAndGetToken(), waiting as an RLock does.
func (fw *redissonFencedWorker) LockFenced(ctx context.Context, name string) (int64, error) {
	w := &fw.base
	l := w.l
	keys := []string{name, redissonPrefixed("redisson_lock_token", name)}
	var token int64
	_, err := w.acquire(ctx, redissonChannelName(name), -1, func() (time.Duration, bool, error) {
		l.attempts.Add(1)
		res, err := l.tr.eval(detach(ctx), true, rsFencedToken, keys, l.leaseArg, w.field).Int64Slice()
		if err != nil {
			return 0, false, fmt.Errorf("redisson: fenced lock %q: %w", name, err)
		}
		if len(res) != 2 {
			return 0, false, fmt.Errorf("redisson: fenced lock %q: reply %v, want {pttl, token}", name, res)
		}
		if res[1] < 0 {
			l.failed.Add(1)
			return time.Duration(res[0]) * time.Millisecond, false, nil
		}
		token = res[1]
		if l.wd != nil {
			l.wd.add(name, renewLock, w.field)
		}
		return 0, true, nil
	})
	return token, err
}

// Lock implements Worker: lock(), the grant counted in the token key but not returned.
func (fw *redissonFencedWorker) Lock(ctx context.Context, name string) error {
	w := &fw.base
	l := w.l
	keys := []string{name, redissonPrefixed("redisson_lock_token", name)}
	_, err := w.acquire(ctx, redissonChannelName(name), -1, func() (time.Duration, bool, error) {
		l.attempts.Add(1)
		// lock() is RedissonLock's (tryAcquireAsync0, handleNoSync) around the fenced script: a
		// WAIT shortfall runs RedissonLock's unlockInnerAsync and the attempt again.
		// lockAndGetToken (LockFenced) has no handleNoSync: its shortfall is its error.
		pttl, err := l.lockSynced(ctx, func() *redis.Cmd {
			return l.tr.eval(detach(ctx), true, rsFencedLock, keys, l.leaseArg, w.field)
		}, func() {
			l.unlockSend(detach(ctx), false, name, rsUnlock, rsUnlockLatched, []string{name, redissonChannelName(name)},
				redissonUnlockMessage, l.leaseArg, w.field, l.publish)
		}).Int64()
		if errors.Is(err, redis.Nil) {
			if l.wd != nil {
				l.wd.add(name, renewLock, w.field)
			}
			return 0, true, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("redisson: fenced lock %q: %w", name, err)
		}
		l.failed.Add(1)
		return time.Duration(pttl) * time.Millisecond, false, nil
	})
	return err
}

// Unlock implements Worker: RedissonLock's release.
func (fw *redissonFencedWorker) Unlock(ctx context.Context, name string) error {
	return fw.base.Unlock(ctx, name)
}
