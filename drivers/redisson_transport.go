package drivers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
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
// the body, or EVALSHA with a SCRIPT LOAD after NOSCRIPT; on a sentinel or cluster master with
// replicas, in a batch with WAIT (syncedEval). It is safe for concurrent use.
type redissonTransport struct {
	rdb      redis.UniversalClient
	topology string
	profile  redissonProfile

	mu       sync.Mutex
	replicas map[string]int // connected replicas per master address, read once per master
}

// eval runs sc on keys[0]'s master. synced says whether it is a lock, unlock or renewal call,
// which syncedEval sends with WAIT.
func (t *redissonTransport) eval(ctx context.Context, synced bool, sc *redissonScript, keys []string, args ...any) *redis.Cmd {
	n := 0
	if synced && t.profile.syncedWait {
		n = t.replicaCount(ctx, keys[0])
	}
	if n == 0 {
		cmd := t.send(ctx, t.rdb, sc, keys, args)
		if t.profile.evalsha && isNoScript(cmd.Err()) {
			if err := t.rdb.ScriptLoad(ctx, sc.body).Err(); err != nil {
				return cmd
			}
			cmd = t.send(ctx, t.rdb, sc, keys, args)
		}
		return cmd
	}
	node, err := t.master(ctx, keys[0])
	if err != nil {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(err)
		return cmd
	}
	cmd := t.sendSynced(ctx, node, sc, keys, args, n)
	if t.profile.evalsha && isNoScript(cmd.Err()) {
		if err := node.ScriptLoad(ctx, sc.body).Err(); err != nil {
			return cmd
		}
		cmd = t.sendSynced(ctx, node, sc, keys, args, n)
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

// sendSynced sends the script and WAIT n in one batch on the master, as Redisson's
// CommandBatchService with syncSlaves does. The WAIT reply is not looked at: Redisson 3.43 only
// logs a master whose replicas did not all acknowledge in time.
func (t *redissonTransport) sendSynced(ctx context.Context, node redis.Cmdable, sc *redissonScript, keys []string, args []any, n int) *redis.Cmd {
	pipe := node.Pipeline()
	var cmd *redis.Cmd
	if t.profile.evalsha {
		cmd = pipe.EvalSha(ctx, sc.sha, keys, args...)
	} else {
		cmd = pipe.Eval(ctx, sc.body, keys, args...)
	}
	pipe.Do(ctx, "wait", n, redissonSyncTimeout)
	_, _ = pipe.Exec(ctx) // the script's own error is in cmd
	return cmd
}

// master returns the client of key's master: the client itself unless on a cluster.
func (t *redissonTransport) master(ctx context.Context, key string) (redis.Cmdable, error) {
	if cc, ok := t.rdb.(*redis.ClusterClient); ok {
		return cc.MasterForKey(ctx, key)
	}
	return t.rdb, nil
}

// replicaCount is how many replicas key's master has (0 on a single server, where Redisson
// never waits: syncedEval applies to sentinel and cluster configurations).
func (t *redissonTransport) replicaCount(ctx context.Context, key string) int {
	if t.topology == topoSingle {
		return 0
	}
	node, err := t.master(ctx, key)
	if err != nil {
		return 0
	}
	addr := ""
	if c, ok := node.(*redis.Client); ok {
		addr = c.Options().Addr
	}
	t.mu.Lock()
	n, ok := t.replicas[addr]
	t.mu.Unlock()
	if ok {
		return n
	}
	info, err := node.Info(ctx, "replication").Result()
	if err != nil {
		return 0
	}
	n, _ = strconv.Atoi(infoField(info, "connected_slaves"))
	t.mu.Lock()
	if t.replicas == nil {
		t.replicas = map[string]int{}
	}
	t.replicas[addr] = n
	t.mu.Unlock()
	return n
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
