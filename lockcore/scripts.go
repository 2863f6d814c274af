package lockcore

import (
	"context"
	"crypto/sha1"
	"encoding/hex"

	"github.com/redis/rueidis"
)

// The scripts implement Redisson's RLock protocol; they are written for lockcore.

// lockScript takes or re-enters the lock.
// KEYS[1] lock; ARGV[1] lease ms; ARGV[2] owner field.
// Returns nil when held, else the lock's PTTL. A hash of the read-write lock (one with "mode")
// is never re-entered: its reader field is the same owner's field, and a read hold of the owner
// (one whose reply was lost, say) is no hold of this lock (rwlock_scripts.go refuses the other
// way round); the check costs a re-entry alone.
// PTTL comes first: -2 (no key) means free, and otherwise it is the reply of a failed attempt,
// which so costs two calls instead of three (see batchScript for this and the string counts).
var lockScript = newScript(`
local ttl = redis.call('pttl', KEYS[1])
if ttl == -2 or (redis.call('hexists', KEYS[1], ARGV[2]) == 1 and redis.call('hexists', KEYS[1], 'mode') == 0) then
  redis.call('hincrby', KEYS[1], ARGV[2], '1')
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return ttl`)

// unlockScript releases one hold.
// KEYS[1] lock, KEYS[2] unlock channel; ARGV[1] unlock message, ARGV[2] lease ms, ARGV[3] owner
// field, ARGV[4] publish command ("publish", or "spublish" on a Redis 7 cluster).
// Returns nil when the owner does not hold the lock, 0 when holds remain, 1 when released.
//
// It decrements first and repairs the rare release by a non-owner (a count below zero: the
// field was not there, and HINCRBY made it) with HDEL, which also removes a key HINCRBY made:
// a last hold costs HINCRBY, DEL and PUBLISH, one call fewer than asking HEXISTS first. The
// script is atomic, so no client sees the repaired field; a replica or AOF gets both writes.
var unlockScript = newScript(`
local n = redis.call('hincrby', KEYS[1], ARGV[3], '-1')
if n < 0 then
  redis.call('hdel', KEYS[1], ARGV[3])
  return nil
end
if n > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[4], KEYS[2], ARGV[1])
return 1`)

// passScript releases one hold as unlockScript does and, when that frees the lock and the
// release message reached no subscriber, takes the lock at once for a local waiter: the release
// and the next grant in one call, as if the waiter's lockScript had run right after. With a
// subscriber somewhere (another process, a Redisson client) the lock is left free for it.
// KEYS[1] lock, KEYS[2] unlock channel; ARGV[1] unlock message, ARGV[2] lease ms, ARGV[3] owner
// field, ARGV[4] publish command, ARGV[5] the waiter's field, ARGV[6] the waiter's lease ms,
// ARGV[7] how many of the channel's subscribers may be this client's own (0 or 1), not counted.
// Returns nil when the owner does not hold the lock, 0 when holds remain, 1 when released and
// heard, 2 when released and taken for the waiter. With no waiter's field (ARGV[5] ""), a release
// that must leave the lock free whoever heard it, it returns 3 instead of taking it: released
// and heard by nobody outside this client. A grant to the waiter that Redis refuses answers 1
// too (released, the lock free, the waiter to take it through Redis): on a cluster whose slot
// is migrating away, the key just deleted belongs to the importing node, and the HINCRBY that
// would recreate it here fails; an error would tell the caller its release failed when it ran.
var passScript = newScript(`
local n = redis.call('hincrby', KEYS[1], ARGV[3], '-1')
if n < 0 then
  redis.call('hdel', KEYS[1], ARGV[3])
  return nil
end
if n > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
if redis.call(ARGV[4], KEYS[2], ARGV[1]) > tonumber(ARGV[7]) then
  return 1
end
if ARGV[5] == '' then
  return 3
end
if type(redis.pcall('hincrby', KEYS[1], ARGV[5], '1')) == 'table' then
  return 1
end
redis.call('pexpire', KEYS[1], ARGV[6])
return 2`)

// renewScript extends the lease if the owner still holds the lock.
// KEYS[1] lock; ARGV[1] lease ms; ARGV[2] owner field. Returns 1 if renewed, 0 if not held.
var renewScript = newScript(`
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0`)

// script is a Lua script run by EVALSHA; the body goes over the wire only to answer NOSCRIPT.
type script struct {
	body string
	sha  string
}

func newScript(body string) *script {
	sum := sha1.Sum([]byte(body))
	return &script{body: body, sha: hex.EncodeToString(sum[:])}
}

// Script commands are pinned, as is every command lockcore builds (TestCommandsPinned checks
// it): rueidis otherwise returns a command's memory to its pool when the call returns, and when
// a connection fails with calls in flight, its writer goroutine may still be reading a command
// that a new call is building in the same memory (the race detector caught it in TestChaos:
// Builder.Evalsha writing what pipe._backgroundWrite read, with nothing ordering the two; and
// again, in CI on 2026-11-27, with the memory of an UNSUBSCRIBE that a dead connection's writer
// had read and that went back to the pool when the call returned). A pinned command is never
// reused; it costs one small allocation.
func (s *script) evalsha(rdb rueidis.Client, keys, args []string) rueidis.Completed {
	return rdb.B().Evalsha().Sha1(s.sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build().Pin()
}

func (s *script) eval(rdb rueidis.Client, keys, args []string) rueidis.Completed {
	return rdb.B().Eval().Script(s.body).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build().Pin()
}

// exec runs the script once.
func (s *script) exec(ctx context.Context, rdb rueidis.Client, keys, args []string) rueidis.RedisResult {
	r := rdb.Do(ctx, s.evalsha(rdb, keys, args))
	if isNoScript(r.Error()) {
		r = rdb.Do(ctx, s.eval(rdb, keys, args))
	}
	return r
}

// scriptCall is one execution in a batch.
type scriptCall struct {
	keys, args []string
}

// execScripts runs calls[i] with scripts[i], all pipelined together; calls answered NOSCRIPT are
// sent again with the body, in a second batch.
func execScripts(ctx context.Context, rdb rueidis.Client, scripts []*script, calls []scriptCall) []rueidis.RedisResult {
	cmds := make(rueidis.Commands, len(calls))
	for i, c := range calls {
		cmds[i] = scripts[i].evalsha(rdb, c.keys, c.args)
	}
	res := rdb.DoMulti(ctx, cmds...)
	if retry := noScript(res); len(retry) > 0 {
		cmds = cmds[:0]
		for _, i := range retry {
			cmds = append(cmds, scripts[i].eval(rdb, calls[i].keys, calls[i].args))
		}
		for j, r := range rdb.DoMulti(ctx, cmds...) {
			res[retry[j]] = r
		}
	}
	return res
}

// noScript returns the indexes of the replies that answered NOSCRIPT: their EVALSHAs ran
// nothing, and their scripts go again by body.
func noScript(res []rueidis.RedisResult) []int {
	var retry []int
	for i, r := range res {
		if isNoScript(r.Error()) {
			retry = append(retry, i)
		}
	}
	return retry
}

func isNoScript(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && re.IsNoScript()
}
