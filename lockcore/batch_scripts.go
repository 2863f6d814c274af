package lockcore

// batchScript runs several Mutex operations of one hash slot in one call, each with exactly the
// Redis effects of its own script (lockScript, unlockScript, passScript, renewScript): the same
// keys, fields, leases, channel, message and return value, in queue order. A Redisson client on
// the same lock cannot tell a batched operation from a single one.
//
// KEYS[i] is the lock of operation i. ARGV[1] is the publish command ("publish" or "spublish");
// then, per operation in KEYS order, its opcode and arguments:
//
//	l lease field                          lock      -> nil when held, else PTTL
//	u lease field                          unlock    -> nil not held, 0 holds remain, 1 released
//	p lease field wfield wlease own        pass      -> as u, or 2 when taken for the waiter;
//	                                                   with wfield "" never taken, 3 when
//	                                                   released and heard by nobody else
//	r lease field                          renew     -> 1 renewed, 0 not held
//
// A lock attempt asks PTTL first: -2 (no key) means free, and otherwise the PTTL is the reply of
// a failed attempt, so a failed attempt costs two calls (PTTL, HEXISTS) instead of three (EXISTS,
// HEXISTS, PTTL) and a free lock still three. Counts go to HINCRBY as strings: a Lua number
// argument is formatted by the server with snprintf on every call, which costs as much as a
// third of the HINCRBY (measured with a 300,000-call loop in one EVAL on Redis 7.0).
//
// A release reads the hold count (HGET) instead of asking HEXISTS: a last hold (count "1") is
// deleted with the key at once, one call fewer than HEXISTS, HINCRBY to 0, DEL, with the same
// result in the keyspace, on the channel and in the reply; any other count is decremented by
// HINCRBY as unlockScript does, so malformed counts fail as they fail there.
//
// The reply is an array with one element per operation. The unlock channel is built here from
// the lock name, as tagged builds it in Go, so that it costs the client nothing to send. The
// first command of each operation that touches the lock's type runs through redis.pcall: a key of
// the wrong type fails that operation alone (its element is the error), as it would fail only
// its own script call, and the operations after it still run. Every operation also runs inside
// Lua's pcall, so that any other error a redis.call raises (a malformed hold count under
// HINCRBY, OOM on a write) ends that operation alone, with the effects it made so far, as its own
// script call would end: an error that aborted the whole call would be the reply of every
// operation while Redis kept the grants made before it, grants their callers would never know
// they hold. Redis 7 catches redis.call's error as a table with an err field, which is an error
// reply in the array; a Lua runtime error is a string, turned into one.
//
// A pass whose grant to the waiter fails (its HINCRBY refused: on a cluster, the slot is
// migrating away and the key, just deleted, now belongs to the importing node) answers 1, as a
// release heard: the lock was released and is free, and the waiter must take it through Redis.
// An error there would tell the caller that its release failed, when it ran.
var batchScript = newScript(batchOps + `
local out = {}
local a = 2
for i = 1, #KEYS do
  local k, op, lease, f = KEYS[i], ARGV[a], ARGV[a + 1], ARGV[a + 2]
  if op == 'p' then
    a = a + 6
  else
    a = a + 3
  end
  local ok, r = pcall(run, k, op, lease, f, a)
  if not ok and type(r) ~= 'table' then
    r = redis.error_reply(tostring(r))
  end
  out[i] = r
end
return out`)

// nodeBatchScript runs the operations of batchScript on locks of several hash slots served by
// one cluster node, in one call: it declares no key, and each operation's lock comes before
// its opcode in ARGV, so that Redis's CROSSSLOT check of declared keys does not apply, and the
// shebang's allow-cross-slot-keys flag (Redis 7.0 and later) lets the script's commands touch
// keys of several slots. Redis still checks every command the script runs against the cluster
// state (scriptVerifyClusterState): a key of a slot the node does not serve, or of a slot it is
// migrating away when the key is not there, fails that command with "Script attempted to access
// a non local key in a cluster node", and a cluster that is down fails it with "... while the
// cluster is down". The first command of every operation touches its lock, and all of them
// touch only the lock and its channel (one slot), whose status cannot change while a script
// runs: so such an operation fails at its first command, having written nothing, and its
// element is that error, for the client to send it again through the routed path (see
// cluster.go). The one command that touches a key an operation deleted, a pass's grant to the
// waiter, is handled in batchOps.
//
// ARGV[1] is the publish command; then, per operation: lock, opcode, arguments (as batchScript).
// The reply is an array with one element per operation, as batchScript's.
var nodeBatchScript = newScript("#!lua flags=allow-cross-slot-keys" + batchOps + `
local out = {}
local a = 2
local i = 1
while a <= #ARGV do
  local k, op, lease, f = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  if op == 'p' then
    a = a + 7
  else
    a = a + 4
  end
  local ok, r = pcall(run, k, op, lease, f, a)
  if not ok and type(r) ~= 'table' then
    r = redis.error_reply(tostring(r))
  end
  out[i] = r
  i = i + 1
end
return out`)

// batchOps is the body batchScript and nodeBatchScript share: run performs one operation on
// lock k and returns its element of the reply; a is the index in ARGV of the next operation's
// first argument, from which a pass finds its waiter's arguments.
const batchOps = `
local pub = ARGV[1]
local function run(k, op, lease, f, a)
  local r
  if op == 'l' then
    local ttl = redis.call('pttl', k)
    local held = 1
    if ttl ~= -2 then
      held = redis.pcall('hexists', k, f)
      if held == 1 and redis.call('hexists', k, 'mode') == 1 then
        held = 0 -- a read-write lock's hash is never re-entered (see lockScript)
      end
    end
    if type(held) == 'table' then
      r = held
    elseif held == 0 then
      r = ttl
    else
      redis.call('hincrby', k, f, '1')
      redis.call('pexpire', k, lease)
      r = false
    end
  elseif op == 'r' then
    local held = redis.pcall('hexists', k, f)
    if type(held) == 'table' then
      r = held
    elseif held == 1 then
      redis.call('pexpire', k, lease)
      r = 1
    else
      r = 0
    end
  else
    local held = redis.pcall('hget', k, f)
    local left = 0
    if held and type(held) ~= 'table' and held ~= '1' then
      left = redis.pcall('hincrby', k, f, '-1')
    end
    if type(held) == 'table' then
      r = held
    elseif not held then
      r = false
    elseif type(left) == 'table' then
      r = left
    elseif left > 0 then
      redis.call('pexpire', k, lease)
      r = 0
    else
      redis.call('del', k)
      local ch
      if string.find(k, '{', 1, true) then
        ch = 'redisson_lock__channel:' .. k
      else
        ch = 'redisson_lock__channel:{' .. k .. '}'
      end
      local heard = redis.call(pub, ch, '0')
      r = 1
      if op == 'p' and heard <= tonumber(ARGV[a - 1]) then
        if ARGV[a - 3] == '' then
          r = 3
        elseif type(redis.pcall('hincrby', k, ARGV[a - 3], '1')) == 'table' then
          r = 1 -- released, not taken for the waiter (see passScript)
        else
          redis.call('pexpire', k, ARGV[a - 2])
          r = 2
        end
      end
    end
  end
  return r
end
`
