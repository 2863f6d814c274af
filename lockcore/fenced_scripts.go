package lockcore

// fencedLockScript takes or re-enters a reentrant lock, as lockScript does, and on every grant,
// a reentrant one included, increments the lock's fencing token counter in the same step, as
// Redisson's RFencedLock does. It implements that protocol; it is written for lockcore.
// KEYS[1] lock, KEYS[2] token counter; ARGV[1] lease ms, ARGV[2] owner field.
// Returns {-1, token} when held, else {the lock's PTTL, -1}. A read-write lock's hash is never
// re-entered (see lockScript).
var fencedLockScript = newScript(`
if redis.call('exists', KEYS[1]) == 0 or (redis.call('hexists', KEYS[1], ARGV[2]) == 1 and redis.call('hexists', KEYS[1], 'mode') == 0) then
  local token = redis.call('incr', KEYS[2])
  redis.call('hincrby', KEYS[1], ARGV[2], '1')
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}`)
