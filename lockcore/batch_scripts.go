package lockcore

// batchScript runs several Mutex operations of one hash slot in one call, each with exactly the
// Redis effects of its own script (lockScript, unlockScript, passScript, renewScript): the same
// keys, fields, leases, channel, message and return value, in queue order. A Redisson client on
// the same lock cannot tell a batched operation from a single one.
//
// KEYS[i] is the lock of operation i. ARGV[1] is the publish command ("publish" or "spublish"),
// ARGV[2] the operations' opcodes, one byte each in KEYS order, ARGV[3] the lease of every
// operation whose opcode is lower case; then, per operation, its arguments (see batchArgv):
//
//	l field                                lock      -> nil when held, else PTTL
//	u field                                unlock    -> nil not held, 0 holds remain, 1 released
//	p field wfield wlease own              pass      -> as u, or 2 when taken for the waiter;
//	                                                   with wfield "" never taken, 3 when
//	                                                   released and heard by nobody else
//	r field                                renew     -> 1 renewed, 0 not held
//
// An upper-case opcode (L, U, P, R) is the same operation with a lease of its own, sent before
// its field. Every argument costs the server about 950 instructions to parse, push into Lua and
// free (docs/findings.md), as much as a third of a redis.call: the opcodes as one string and the
// lease once (a batch's leases are nearly always equal) leave two arguments per operation of
// the four (key, opcode, lease, field) each used to cost.
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
local a = 4
for i = 1, #KEYS do
  local op, lease = byte(codes, i), common
  if op < 97 then
    op, lease, a = op + 32, ARGV[a], a + 1
  end
  local f = ARGV[a]
  if op == P then
    a = a + 4
  else
    a = a + 1
  end
  local ok, r = pcall(run, KEYS[i], op, lease, f, a)
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
// ARGV[1..3] are batchScript's; then, per operation: its lock, then its arguments as in
// batchScript. The reply is an array with one element per operation, as batchScript's.
var nodeBatchScript = newScript("#!lua flags=allow-cross-slot-keys" + batchOps + `
local out = {}
local a = 4
for i = 1, #codes do
  local k = ARGV[a]
  local op, lease = byte(codes, i), common
  if op < 97 then
    op, lease, a = op + 32, ARGV[a + 1], a + 1
  end
  local f = ARGV[a + 1]
  if op == P then
    a = a + 5
  else
    a = a + 2
  end
  local ok, r = pcall(run, k, op, lease, f, a)
  if not ok and type(r) ~= 'table' then
    r = redis.error_reply(tostring(r))
  end
  out[i] = r
end
return out`)

// batchOps is the body batchScript and nodeBatchScript share: run performs one operation on
// lock k and returns its element of the reply; a is the index in ARGV of the next operation's
// first argument, from which a pass finds its waiter's arguments.
const batchOps = `
local pub, codes, common = ARGV[1], ARGV[2], ARGV[3]
local byte = string.byte
local L, P, R = 108, 112, 114 -- 'l', 'p', 'r'
local function run(k, op, lease, f, a)
  local r
  if op == L then
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
  elseif op == R then
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
      if op == P and heard <= tonumber(ARGV[a - 1]) then
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

// batchArgv builds the ARGV of a batchScript call or, with names, of a nodeBatchScript call,
// in storage it keeps for the next call.
type batchArgv struct {
	args  []string
	codes []byte
	names bool
}

// reset starts an ARGV whose lower-case operations take lease (any operation's lease will do;
// the first's is the usual choice: a batch's leases are nearly always equal).
func (b *batchArgv) reset(pub, lease string, names bool) {
	b.args = append(b.args[:0], pub, "", lease)
	b.codes = b.codes[:0]
	b.names = names
}

// add appends one operation on lock name: its opcode (lower case), its lease, then the rest of
// its arguments, field first.
func (b *batchArgv) add(name string, code byte, lease string, rest ...string) {
	if b.names {
		b.args = append(b.args, name)
	}
	if lease != b.args[2] {
		code -= 'a' - 'A'
		b.args = append(b.args, lease)
	}
	b.codes = append(b.codes, code)
	b.args = append(b.args, rest...)
}

// argv returns the ARGV built since reset, valid until the next reset or clear.
func (b *batchArgv) argv() []string {
	b.args[1] = string(b.codes)
	return b.args
}

// clear drops the ARGV's strings, so that a pooled batchArgv keeps no caller's memory alive.
func (b *batchArgv) clear() {
	clear(b.args)
	b.args = b.args[:0]
}
