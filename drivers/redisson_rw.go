package drivers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The RReadWriteLock scripts, written for lockbench with the semantics, key layout and replies of
// Redisson 3.22–3.43's RedissonReadLock and RedissonWriteLock, so that lockcore's RWMutex and
// this driver exclude each other on one name.
//
// Layout: the lock is a hash at name with field "mode" ("read" or "write"), one field per reader
// "<uuid>:<n>" counting its read holds, and the writer's field "<uuid>:<n>:write" counting its
// write holds. Read hold i of a reader has its own key "{name}:<field>:rwlock_timeout:<i>" with
// that hold's lease; a read release sets the hash's TTL to the longest of them. Releases are
// announced on "redisson_rwlock:{name}": "0" (wake one) by a read release that frees the lock,
// "1" (wake all) by a write release that does.
//
// Where lockbench departs from Redisson it is only in a release refusing what Redisson lets
// through: releasing a lock that is gone publishes as Redisson does but answers nil ("not held"),
// where Redisson answers 1 (released), because the driver interface reports ErrNotHeld then.

// redissonReadLockLua takes or re-enters a read hold; a writer may take read holds too.
// KEYS[1] lock, KEYS[2] the reader's timeout key prefix "{name}:<field>:rwlock_timeout";
// ARGV[1] lease ms, ARGV[2] reader field, ARGV[3] the same owner's write field.
// Returns nil when held, else the lock's PTTL.
const redissonReadLockLua = `
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'read')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':1', 1)
  redis.call('pexpire', KEYS[2] .. ':1', ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
  local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  local timeout = KEYS[2] .. ':' .. n
  redis.call('set', timeout, 1)
  redis.call('pexpire', timeout, ARGV[1])
  redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), tonumber(ARGV[1])))
  return nil
end
return redis.call('pttl', KEYS[1])`

// redissonReadUnlockLua releases one read hold.
// KEYS[1] lock, KEYS[2] channel, KEYS[3] the reader's timeout key prefix, KEYS[4] the lock's key
// prefix "{name}"; ARGV[1] unlock message, ARGV[2] reader field, ARGV[3] publish command.
// Returns nil when the owner has no read hold, 0 when the lock is still held, 1 when freed.
const redissonReadUnlockLua = `
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call(ARGV[3], KEYS[2], ARGV[1])
  -- gone: latch 1
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return nil
end
local n = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if n == 0 then
  redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (n + 1))
if redis.call('hlen', KEYS[1]) > 1 then
  local longest = -3
  for _, f in ipairs(redis.call('hkeys', KEYS[1])) do
    local holds = tonumber(redis.call('hget', KEYS[1], f))
    if type(holds) == 'number' then
      for i = holds, 1, -1 do
        longest = math.max(longest, redis.call('pttl', KEYS[4] .. ':' .. f .. ':rwlock_timeout:' .. i))
      end
    end
  end
  if longest > 0 then
    redis.call('pexpire', KEYS[1], longest)
    return 0
  end
  if mode == 'write' then
    return 0
  end
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[1])
return 1`

// redissonWriteLockLua takes or re-enters the write hold. Re-entering adds a lease to the TTL,
// as Redisson does.
// KEYS[1] lock; ARGV[1] lease ms, ARGV[2] writer field. Returns nil when held, else the PTTL.
const redissonWriteLockLua = `
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'write')
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], redis.call('pttl', KEYS[1]) + tonumber(ARGV[1]))
  return nil
end
return redis.call('pttl', KEYS[1])`

// redissonWriteUnlockLua releases one write hold; the last one deletes the lock and wakes every
// waiter, or leaves it in read mode for the owner's own read holds.
// KEYS[1] lock, KEYS[2] channel; ARGV[1] read-unlock message, ARGV[2] lease ms, ARGV[3] writer
// field, ARGV[4] publish command.
// Returns nil when the owner has no write hold, 0 when write holds remain, 1 when released.
const redissonWriteUnlockLua = `
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call(ARGV[4], KEYS[2], ARGV[1])
  -- gone: latch 1
  return nil
end
if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
  redis.call(ARGV[4], KEYS[2], ARGV[1])
else
  redis.call('hset', KEYS[1], 'mode', 'read')
end
return 1`

// The read-write lock's scripts as sent.
var (
	rsReadLock           = newRedissonScript(redissonReadLockLua)
	rsReadUnlock         = newRedissonScript(redissonReadUnlockLua)
	rsReadUnlockLatched  = newRedissonScript(withUnlockLatch(withGoneLatch(redissonReadUnlockLua)))
	rsWriteLock          = newRedissonScript(redissonWriteLockLua)
	rsWriteUnlock        = newRedissonScript(redissonWriteUnlockLua)
	rsWriteUnlockLatched = newRedissonScript(withUnlockLatch(withGoneLatch(redissonWriteUnlockLua)))
)

// redissonRWWorker is a redissonWorker whose Lock and Unlock are an RReadWriteLock's write lock,
// and RLock and RUnlock its read lock. Its LockMulti still takes RLocks, as Redisson's
// RedissonMultiLock over getLock(name) does.
type redissonRWWorker struct {
	redissonWorker
}

var (
	_ RWWorker    = (*redissonRWWorker)(nil)
	_ MultiWorker = (*redissonRWWorker)(nil)
)

// RLock implements RWWorker.
func (w *redissonRWWorker) RLock(ctx context.Context, name string) error {
	l := w.l
	keys := []string{name, redissonRWTimeoutPrefix(name, w.field)}
	writeField := w.field + ":write"
	_, err := w.acquire(ctx, redissonRWChannelName(name), -1, func() (time.Duration, bool, error) {
		// A WAIT shortfall runs RedissonReadLock's unlockInnerAsync and the attempt again
		// (RedissonLock.tryAcquireAsync0's handleNoSync, inherited).
		pttl, err := l.lockSynced(ctx, func() *redis.Cmd {
			return l.tr.eval(detach(ctx), true, rsReadLock, keys, l.leaseArg, w.field, writeField)
		}, func() {
			l.unlockSend(detach(ctx), false, name, rsReadUnlock, rsReadUnlockLatched,
				[]string{name, redissonRWChannelName(name), redissonRWTimeoutPrefix(name, w.field), redissonKeyPrefix(name)},
				redissonUnlockMessage, w.field, l.publish)
		}).Int64()
		return w.result(name, renewRead, w.field, pttl, err)
	})
	return err
}

// Lock takes the write lock. An owner holding read holds waits for itself, as in Redisson.
func (w *redissonRWWorker) Lock(ctx context.Context, name string) error {
	l := w.l
	keys := []string{name}
	writeField := w.field + ":write"
	_, err := w.acquire(ctx, redissonRWChannelName(name), -1, func() (time.Duration, bool, error) {
		// A WAIT shortfall runs RedissonWriteLock's unlockInnerAsync and the attempt again.
		pttl, err := l.lockSynced(ctx, func() *redis.Cmd {
			return l.tr.eval(detach(ctx), true, rsWriteLock, keys, l.leaseArg, writeField)
		}, func() {
			l.unlockSend(detach(ctx), false, name, rsWriteUnlock, rsWriteUnlockLatched, []string{name, redissonRWChannelName(name)},
				redissonReadUnlockMessage, l.leaseArg, writeField, l.publish)
		}).Int64()
		return w.result(name, renewLock, writeField, pttl, err)
	})
	return err
}

// result reads a lock script's reply: a nil reply is a grant, renewed by the watchdog as kind if
// there is one.
func (w *redissonRWWorker) result(name string, kind redissonRenewKind, field string, pttl int64, err error) (time.Duration, bool, error) {
	if errors.Is(err, redis.Nil) {
		if w.l.wd != nil {
			w.l.wd.add(name, kind, field)
		}
		return 0, true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("redisson: lock %q: %w", name, err)
	}
	return time.Duration(pttl) * time.Millisecond, false, nil
}

// RUnlock implements RWWorker.
func (w *redissonRWWorker) RUnlock(ctx context.Context, name string) error {
	l := w.l
	_, err := l.unlockCall(detach(ctx), name, rsReadUnlock, rsReadUnlockLatched,
		[]string{name, redissonRWChannelName(name), redissonRWTimeoutPrefix(name, w.field), redissonKeyPrefix(name)},
		redissonUnlockMessage, w.field, l.publish).Int64()
	if l.wd != nil {
		l.wd.remove(name, renewRead, w.field)
	}
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("%w: no read hold of %q by %s", ErrNotHeld, name, w.field)
	}
	if err != nil {
		return fmt.Errorf("redisson: read unlock %q: %w", name, err)
	}
	return nil
}

// Unlock releases the write lock.
func (w *redissonRWWorker) Unlock(ctx context.Context, name string) error {
	l := w.l
	writeField := w.field + ":write"
	_, err := l.unlockCall(detach(ctx), name, rsWriteUnlock, rsWriteUnlockLatched, []string{name, redissonRWChannelName(name)},
		redissonReadUnlockMessage, l.leaseArg, writeField, l.publish).Int64()
	if l.wd != nil {
		l.wd.remove(name, renewLock, writeField)
	}
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("%w: no write hold of %q by %s", ErrNotHeld, name, w.field)
	}
	if err != nil {
		return fmt.Errorf("redisson: write unlock %q: %w", name, err)
	}
	return nil
}

// withGoneLatch makes a read or write unlock script set its latch to 1 when the lock is gone
// (no mode) before it returns nil, as RedissonReadLock and RedissonWriteLock.unlockInnerAsync do
// from 3.24 (read at redisson-3.43.0, 3.52.0 and 4.7.0): an unlock sent again then answers 1.
func withGoneLatch(body string) string {
	return strings.Replace(body, "  -- gone: latch 1\n", "  redis.call('set', KEYS[#KEYS], 1, 'px', ARGV[#ARGV])\n", 1)
}

// redissonKeyPrefix is the read-write lock's hash-tagged prefix for its helper keys: "{name}",
// or name itself if it has a hash tag (Redisson's suffixName).
func redissonKeyPrefix(name string) string {
	if strings.Contains(name, "{") {
		return name
	}
	return "{" + name + "}"
}

// redissonRWTimeoutPrefix is the prefix of a reader's per-hold timeout keys:
// "{name}:<field>:rwlock_timeout", hold i at prefix + ":<i>".
func redissonRWTimeoutPrefix(name, field string) string {
	return redissonKeyPrefix(name) + ":" + field + ":rwlock_timeout"
}

// redissonRWChannelName is the read-write lock's wake-up channel, "redisson_rwlock:{name}".
func redissonRWChannelName(name string) string {
	return "redisson_rwlock:" + redissonKeyPrefix(name)
}
