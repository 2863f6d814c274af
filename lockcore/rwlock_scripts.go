package lockcore

// The scripts of the read-write lock follow Redisson's RReadWriteLock layout, so that a Redisson
// client and lockcore exclude each other on the same lock; they are written for lockcore.
//
// Layout. The lock is a hash at the lock name: field "mode" is "read" or "write"; a reader's
// field "<client id>:<owner>" counts its read holds; the writer's field
// "<client id>:<owner>:write" counts its write holds. Every read hold n (1, 2, ...) of a reader
// has its own key "{name}:<reader field>:rwlock_timeout:<n>" carrying that hold's lease, so the
// hash outlives a crashed reader only as long as the crashed reader's own leases: a release
// recomputes the hash's TTL from the live timeout keys. All helper keys start with the lock's
// hash tag, so a cluster keeps them in one slot. Releases are announced on
// "redisson_rwlock:{name}": "0" when a read release frees the lock, "1" (wake every waiter) when
// a write release does, or leaves only read holds that waiting readers may now share.
//
// Where lockcore departs from Redisson, it is in what a script refuses, never in the layout: a
// lock hash without "mode" (a Mutex, FairMutex or FencedMutex of the same name) is taken, not
// joined (Redisson's read and write scripts would add "mode" to it and grant, letting two lock
// kinds hold one name at once); unlocking a lock that does not exist is "not held" (nil), not a
// success; a reader asking for the write lock gets -3 instead of waiting for itself forever;
// TTLs are only ever extended by an acquisition or renewal (max of the current TTL and the
// lease), so one hold's short lease cannot cut another hold's longer one in the shared hash.

// rwReadLockScript takes or re-enters a read hold.
// KEYS[1] lock, KEYS[2] the reader's timeout key prefix "{name}:<field>:rwlock_timeout";
// ARGV[1] lease ms, ARGV[2] reader field, ARGV[3] the same owner's write field.
// Returns nil when held, else the lock's PTTL. A writer may take read holds (downgrade).
// Re-entering extends the owner's earlier read holds to the lease too, as re-entering a Mutex
// extends its hash: the owner's holds share one lease clock, which the watchdog renews.
var rwReadLockScript = newScript(`
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  if redis.call('exists', KEYS[1]) == 1 then
    return redis.call('pttl', KEYS[1])
  end
  redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':1', 1, 'px', ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'read' or redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
  local n = redis.call('hincrby', KEYS[1], ARGV[2], '1')
  redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', ARGV[1])
  for i = n - 1, 1, -1 do
    local k = KEYS[2] .. ':' .. i
    if redis.call('pttl', k) < tonumber(ARGV[1]) then
      redis.call('pexpire', k, ARGV[1])
    end
  end
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
  return nil
end
return redis.call('pttl', KEYS[1])`)

// rwWriteLockScript takes or re-enters the write hold.
// KEYS[1] lock, KEYS[2] the owner's read timeout key prefix; ARGV[1] lease ms, ARGV[2] writer
// field, ARGV[3] the same owner's reader field.
// Returns nil when held; -3 when the owner holds live read holds and no write hold (an upgrade,
// which would wait for itself forever); else the lock's PTTL.
var rwWriteLockScript = newScript(`
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  if redis.call('exists', KEYS[1]) == 1 then
    return redis.call('pttl', KEYS[1])
  end
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], '1')
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
    redis.call('pexpire', KEYS[1], ARGV[1])
  end
  return nil
end
if mode == 'read' then
  local n = tonumber(redis.call('hget', KEYS[1], ARGV[3]))
  if n then
    for i = n, 1, -1 do
      if redis.call('pttl', KEYS[2] .. ':' .. i) > 0 then
        return -3
      end
    end
  end
end
return redis.call('pttl', KEYS[1])`)

// rwReadUnlockScript releases one read hold.
// KEYS[1] lock, KEYS[2] channel, KEYS[3] the reader's timeout key prefix, KEYS[4] the lock's
// key prefix ("{name}"); ARGV[1] unlock message, ARGV[2] reader field, ARGV[3] publish command.
// Returns nil when the owner has no read hold, 0 when the lock is still held (by others, or by
// the owner's other holds), 1 when this release freed it.
var rwReadUnlockScript = newScript(`
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false or redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return nil
end
local n = redis.call('hincrby', KEYS[1], ARGV[2], '-1')
if n <= 0 then
  redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (n + 1))
if redis.call('hlen', KEYS[1]) > 1 then
  if mode == 'write' then
    return 0
  end
  local left = -3
  for _, f in ipairs(redis.call('hkeys', KEYS[1])) do
    local c = tonumber(redis.call('hget', KEYS[1], f))
    if c then
      for i = c, 1, -1 do
        left = math.max(left, redis.call('pttl', KEYS[4] .. ':' .. f .. ':rwlock_timeout:' .. i))
      end
    end
  end
  if left > 0 then
    redis.call('pexpire', KEYS[1], left)
    return 0
  end
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[1])
return 1`)

// rwWriteUnlockScript releases one write hold.
// KEYS[1] lock, KEYS[2] channel; ARGV[1] wake-all message, ARGV[2] lease ms, ARGV[3] writer
// field, ARGV[4] publish command.
// Returns nil when the owner has no write hold, 0 when write holds remain, 1 when the last one
// went (the lock is deleted, or left in read mode for the owner's read holds).
var rwWriteUnlockScript = newScript(`
if redis.call('hget', KEYS[1], 'mode') ~= 'write' or redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], '-1') > 0 then
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[1], ARGV[2])
  end
  return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
else
  redis.call('hset', KEYS[1], 'mode', 'read')
end
redis.call(ARGV[4], KEYS[2], ARGV[1])
return 1`)

// rwReadRenewScript extends the lease of the owner's read holds: the hash and each of the
// owner's timeout keys. Other readers' timeout keys are theirs to renew (Redisson renews them
// all), so a crashed reader's holds still run out while live readers renew.
// KEYS[1] lock, KEYS[2] the reader's timeout key prefix; ARGV[1] lease ms, ARGV[2] reader field.
// Returns 1 if renewed, 0 if the owner holds no read hold.
var rwReadRenewScript = newScript(`
local n = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if n == nil then
  return 0
end
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('pexpire', KEYS[1], ARGV[1])
end
for i = n, 1, -1 do
  redis.call('pexpire', KEYS[2] .. ':' .. i, ARGV[1])
end
return 1`)

// rwWriteRenewScript extends the lease of the write hold, never shortening the hash's TTL (read
// holds the writer took may have a longer one).
// KEYS[1] lock; ARGV[1] lease ms, ARGV[2] writer field. Returns 1 if renewed, 0 if not held.
var rwWriteRenewScript = newScript(`
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return 0
end
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('pexpire', KEYS[1], ARGV[1])
end
return 1`)
