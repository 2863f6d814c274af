package drivers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// redissonScript is one of the driver's Lua scripts with its SHA1, for the profiles that send
// EVALSHA.
type redissonScript struct {
	body string
	sha  string
}

func newRedissonScript(body string) *redissonScript {
	return &redissonScript{body: body, sha: redis.NewScript(body).Hash()}
}

// redissonTransport sends the driver's scripts the way the profile's Redisson does: EVAL with
// the body, or EVALSHA with a SCRIPT LOAD after NOSCRIPT; lock, unlock and renewal scripts on a
// sentinel or cluster master through syncedEval (redisson_sync.go). It is safe for concurrent
// use.
type redissonTransport struct {
	rdb      redis.UniversalClient
	topology string
	profile  redissonProfile

	mu sync.Mutex
	// probed, waitKnown and waitAOFKnown are the answer to the first synced call's probe
	// (3.27+): whether the server knows WAIT and WAITAOF.
	probed, waitKnown, waitAOFKnown bool
	masters                         map[string]redissonMasterSync // per master address (3.27+)
	loaded                          map[string]bool               // "<master> <sha>" loaded before a batch (3.52)
	timeouts                        map[redissonTimeoutKey]*redis.Client
}

// eval runs sc on keys[0]'s master. synced says whether it is a lock, unlock or renewal call,
// which Redisson sends through syncedEval on a sentinel or cluster (from 3.21.0: RedissonLock,
// RedissonBaseLock). On a single server syncedEval sends the script alone (3.23.0: the config
// uses no replicas, so no INFO and a batch without WAIT; 3.27.0+: isSingleConfig).
func (t *redissonTransport) eval(ctx context.Context, synced bool, sc *redissonScript, keys []string, args ...any) *redis.Cmd {
	if synced && t.profile.syncedWait && t.topology != topoSingle {
		return t.syncedEval(ctx, sc, keys, args)
	}
	return t.plain(ctx, sc, keys, args)
}

// plain is one EVAL, or EVALSHA with SCRIPT LOAD and EVALSHA again after NOSCRIPT.
func (t *redissonTransport) plain(ctx context.Context, sc *redissonScript, keys []string, args []any) *redis.Cmd {
	cmd := t.send(ctx, t.rdb, sc, keys, args)
	if t.profile.evalsha && isNoScript(cmd.Err()) {
		if err := t.rdb.ScriptLoad(ctx, sc.body).Err(); err != nil {
			return cmd
		}
		cmd = t.send(ctx, t.rdb, sc, keys, args)
	}
	return cmd
}

// send is one EVAL or EVALSHA.
func (t *redissonTransport) send(ctx context.Context, c redis.Scripter, sc *redissonScript, keys []string, args []any) *redis.Cmd {
	if t.profile.evalsha {
		return c.EvalSha(ctx, sc.sha, keys, args...)
	}
	return c.Eval(ctx, sc.body, keys, args...)
}

// masterClient returns the client of key's master and its address: the slot's master on a
// cluster; on a sentinel the client itself and "" (it follows whichever master the sentinels
// name, one cache entry).
func (t *redissonTransport) masterClient(ctx context.Context, key string) (*redis.Client, string, error) {
	if cc, ok := t.rdb.(*redis.ClusterClient); ok {
		c, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return nil, "", err
		}
		return c, c.Options().Addr, nil
	}
	c, ok := t.rdb.(*redis.Client)
	if !ok {
		return nil, "", fmt.Errorf("redisson: no master client for a %T", t.rdb)
	}
	return c, "", nil // a failover client's Addr is a placeholder; it follows one master
}

// isNoScript reports whether err is Redis's NOSCRIPT reply.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// redissonRequestID is Redisson's ServiceManager.generateId: 16 random bytes in hex.
func redissonRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand crashes the program rather than return an error
	return hex.EncodeToString(b[:])
}

// redissonUnlockLatchName is the latch key of one unlock call, "redisson_unlock_latch:{name}:<id>".
func redissonUnlockLatchName(name, requestID string) string {
	return redissonPrefixed("redisson_unlock_latch", name) + ":" + requestID
}

// withUnlockLatch turns an unlock script into its 3.24+ form: it returns the latch's value when
// the latch exists (the call was already made), and sets the latch to what it returns, with a PX,
// before returning 0 or 1. The latch key is the script's last key, the PX its last argument.
func withUnlockLatch(body string) string {
	r := strings.NewReplacer(
		"return 0", "redis.call('set', KEYS[#KEYS], 0, 'px', ARGV[#ARGV])\n  return 0",
		"return 1", "redis.call('set', KEYS[#KEYS], 1, 'px', ARGV[#ARGV])\n  return 1",
	)
	return `
local latch = redis.call('get', KEYS[#KEYS])
if latch ~= false then
  return tonumber(latch)
end` + r.Replace(body)
}
