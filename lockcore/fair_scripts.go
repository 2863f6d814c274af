package lockcore

// The fair lock scripts implement Redisson's RedissonFairLock protocol; they are written for
// lockcore. Besides the lock hash, a fair lock has a list of waiting owner fields in arrival
// order (the queue) and a sorted set scoring each waiter with its deadline in Unix ms (the
// timeouts). A waiter's deadline is the deadline of the one ahead of it, or the lock's expiry,
// plus the lock's wait time: a waiter that stops retrying past it is presumed dead and dropped
// from the head of the queue by the next script that looks. Times are client wall clocks in
// Unix ms, as Redisson sends them.
//
// Common keys: KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts.

// fairDropStale removes waiters at the head of the queue whose deadline has passed (ARGV[4] is
// now). A queue entry without a deadline, which only a hand edit leaves, counts as stale too
// rather than failing every script on the lock. Deadlines of the others are left alone.
const fairDropStale = `
local now = tonumber(ARGV[4])
while true do
  local head = redis.call('lindex', KEYS[2], 0)
  if not head then break end
  local due = tonumber(redis.call('zscore', KEYS[3], head))
  if due and due > now then break end
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], head)
end
`

// fairGrantOrReenter takes the lock for ARGV[2] if it is free and nobody else is first in line,
// leaving the queue and moving every waiter's deadline one wait (ARGV[3]) earlier, as they all
// moved up one place; or counts up a hold ARGV[2] already has, never in a read-write lock's hash
// (see lockScript). Either returns nil.
const fairGrantOrReenter = `
if redis.call('exists', KEYS[1]) == 0 then
  local head = redis.call('lindex', KEYS[2], 0)
  if (not head) or head == ARGV[2] then
    if head then redis.call('lpop', KEYS[2]) end
    redis.call('zrem', KEYS[3], ARGV[2])
    local step = -tonumber(ARGV[3])
    for _, waiter in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
      redis.call('zincrby', KEYS[3], step, waiter)
    end
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
  end
elseif redis.call('hexists', KEYS[1], ARGV[2]) == 1 and redis.call('hexists', KEYS[1], 'mode') == 0 then
  redis.call('hincrby', KEYS[1], ARGV[2], '1')
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
`

// fairLockScript takes the lock or joins the queue. The queue and timeouts keys get a TTL past
// the latest deadline (a lockcore addition): by then every waiter in them is stale, and a
// waiter whose leave never reached Redis (a partition) would otherwise stay in keys without a
// TTL until some later call on the lock purged it. Redisson clients on the same lock do not
// extend that TTL; a Java waiter queued behind lockcore ones re-joins the queue if it lapses.
// ARGV[1] lease ms, ARGV[2] owner field, ARGV[3] wait ms, ARGV[4] now (Unix ms).
// Returns nil when held; otherwise how long, in ms, until the waiter ahead (or the lock, for the
// first waiter) is due, which may be zero or less when that is already past.
var fairLockScript = newScript(fairDropStale + fairGrantOrReenter + `
local wait = tonumber(ARGV[3])
local mine = redis.call('zscore', KEYS[3], ARGV[2])
if mine then
  return tonumber(mine) - wait - now
end
local ahead
local last = redis.call('lindex', KEYS[2], -1)
if last and last ~= ARGV[2] then
  local due = tonumber(redis.call('zscore', KEYS[3], last))
  if due then ahead = due - now end
end
if not ahead then
  ahead = redis.call('pttl', KEYS[1])
end
if redis.call('zadd', KEYS[3], ahead + wait + now, ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
local latest = redis.call('zrange', KEYS[3], -1, -1, 'WITHSCORES')[2]
if latest then
  local keep = math.floor(tonumber(latest) - now + 2 * wait)
  if keep > 0 and redis.call('pttl', KEYS[2]) < keep then
    redis.call('pexpire', KEYS[2], keep)
    redis.call('pexpire', KEYS[3], keep)
  end
end
return ahead`)

// fairTryLockScript takes the lock if it is free and nobody waits ahead, without ever joining
// the queue. Same ARGV as fairLockScript. Returns nil when held, 1 when not.
var fairTryLockScript = newScript(fairDropStale + fairGrantOrReenter + `
return 1`)

// fairUnlockScript releases one hold; a full release wakes only the first waiter, on its own
// channel: KEYS[4] (the lock's unlock channel) + ":" + its owner field.
// ARGV[1] unlock message, ARGV[2] lease ms, ARGV[3] owner field, ARGV[4] now (Unix ms),
// ARGV[5] publish command.
// Returns nil when the owner does not hold the lock, 0 when holds remain, 1 when released. A lock
// that is gone (its lease ran out) still has its first waiter woken, as Redisson does, but the
// caller hears nil: Redisson answers 1 there, and lockcore reports a non-owner unlock instead.
var fairUnlockScript = newScript(fairDropStale + `
local function wakeFirst()
  local head = redis.call('lindex', KEYS[2], 0)
  if head then redis.call(ARGV[5], KEYS[4] .. ':' .. head, ARGV[1]) end
end
if redis.call('exists', KEYS[1]) == 0 then
  wakeFirst()
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], '-1') > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
wakeFirst()
return 1`)

// fairLeaveScript takes a waiter that gives up out of the queue; the waiters behind it move up
// one place, so their deadlines come one wait earlier. If it was first in line and the lock is
// free, a release may have woken it just now: the new first waiter is woken instead, so the
// wake-up is not lost with it (a lockcore addition; Redisson's waiters then wait for their TTL).
// KEYS[1] queue, KEYS[2] timeouts, KEYS[3] lock, KEYS[4] unlock channel; ARGV[1] owner field,
// ARGV[2] wait ms, ARGV[3] unlock message, ARGV[4] publish command.
// Returns the waiter's position in the queue from 1, or 0 if it was not queued.
var fairLeaveScript = newScript(`
local queue = redis.call('lrange', KEYS[1], 0, -1)
local pos = 0
for i, waiter in ipairs(queue) do
  if waiter == ARGV[1] then pos = i break end
end
if pos > 0 then
  local step = -tonumber(ARGV[2])
  for i = pos + 1, #queue do
    redis.call('zincrby', KEYS[2], step, queue[i])
  end
end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('lrem', KEYS[1], 0, ARGV[1])
if pos == 1 and redis.call('exists', KEYS[3]) == 0 then
  local head = redis.call('lindex', KEYS[1], 0)
  if head then redis.call(ARGV[4], KEYS[4] .. ':' .. head, ARGV[3]) end
end
return pos`)
