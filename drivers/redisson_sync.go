package drivers

// The synced path of the redisson drivers (issue 39): what Redisson's syncedEval does on a
// sentinel or cluster master with replicas, and what its callers do when the replicas do not
// acknowledge. Read from Redisson's source at the tags named (redisson/redisson,
// redisson/src/main/java/org/redisson/): CommandAsyncService.syncedEval and handleNoSync,
// CommandBatchService, RedisCommonBatchExecutor, ServiceManager.execute, RedissonLock
// (tryAcquireAsync0), RedissonBaseLock (unlockAsync), BaseConfig and Config.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redissonSyncDiscovery is how syncedEval learns the replicas of a key's master before it sends
// a lock, unlock or renewal script with WAIT.
type redissonSyncDiscovery uint8

const (
	// redissonInfoAllCached (3.52.0, 4.7.0; the zero value): once per client a batch of
	// WAIT 0 0 and WAITAOF 0 0 0 finds which of the two the server knows; each master's
	// connected_slaves and aof_enabled are cached from an INFO ALL and read again after a
	// call whose synced count differs from the cached count.
	redissonInfoAllCached redissonSyncDiscovery = iota
	// redissonInfoCached (3.27.0 to 3.43.0): once per client WAIT 0 0 checks that the server
	// knows WAIT; each master's connected_slaves is cached from INFO REPLICATION and read again
	// after a call that synced fewer replicas than cached.
	redissonInfoCached
	// redissonInfoEveryCall (3.21.0 to 3.24.x; 3.25 and 3.26 add the WAIT 0 0 probe but still
	// read INFO every call): INFO REPLICATION before every call, no probe
	// and no cache (CommandAsyncService.syncedEval at 3.23.0: writeAsync(key, INFO_REPLICATION)
	// unless the config uses no replicas, which a single-server config never does).
	redissonInfoEveryCall
)

// Redisson's defaults that time the synced path.
const (
	// RedissonTimeout is Redisson's timeout (BaseConfig, 3000 ms in every profile): how long a
	// command waits for its reply before it is sent again or fails. The redisson drivers' go-redis
	// client uses it as its reply timeout.
	RedissonTimeout = 3 * time.Second
	// redissonLegacyRetryInterval is retryInterval, the constant delay before a retry up to 3.4x.
	redissonLegacyRetryInterval = 1500 * time.Millisecond
)

// ErrRedissonNotSynced is what a Redisson lock, unlock or renewal call fails with when none of
// its master's replicas acknowledged it within slavesSyncTimeout (1 s) and checkLockSyncedSlaves
// is on (its default): Redisson's IllegalStateException (NoSyncedSlavesException from 3.52)
// "None of slaves were synced". Errors wrapping it are *RedissonNotSyncedError values.
var ErrRedissonNotSynced = errors.New("redisson: none of the replicas acknowledged")

// RedissonNotSyncedError is the error a redisson driver returns where Redisson throws "None of
// slaves were synced": the script ran on Master, but WAIT (or WAITAOF) counted no replica of
// Replicas within 1 s, after Attempts calls of the operation. It wraps ErrRedissonNotSynced. A
// lock call that fails with it holds nothing (Redisson undid it), except in the 3.43 profile,
// which neither undoes nor retries (see the profile's noSyncUnhandled).
type RedissonNotSyncedError struct {
	Key      string // the script's first key
	Master   string // the cluster master's address; "" for the master a sentinel client follows
	Replicas int    // connected_slaves the client waited for
	Attempts int    // calls made, retries included
	Message  string // Redisson's exception message in the profile's version
}

func (e *RedissonNotSyncedError) Error() string {
	master := e.Master
	if master == "" {
		master = "the sentinels'"
	}
	return fmt.Sprintf("%s (key %s, master %s: 0 of %d replicas synced; %d attempts)",
		e.Message, e.Key, master, e.Replicas, e.Attempts)
}

// Unwrap returns ErrRedissonNotSynced.
func (e *RedissonNotSyncedError) Unwrap() error { return ErrRedissonNotSynced }

// notSyncedMessage is the message of Redisson's exception in the profile's version.
func (p redissonProfile) notSyncedMessage() string {
	if p.syncDiscovery == redissonInfoEveryCall {
		return "None of slaves were synced" // CommandAsyncService.syncedEval, 3.21.0 to 3.23.x (3.24.0 adds the hint)
	}
	return "None of slaves were synced. Try to increase slavesSyncTimeout setting or set checkLockSyncedSlaves = false."
}

// retryAttempts is Redisson's retryAttempts default: how many times ServiceManager.execute
// runs a lock or unlock again after a shortfall, and a batch is sent again after a timeout.
func (p redissonProfile) retryAttempts() int {
	if p.legacyRetry {
		return 3
	}
	return 4
}

// retryDelay is the wait before retry attempt (1, 2, …): retryInterval up to 3.4x, and from
// 3.52 retryDelay, EqualJitterDelay(1 s, 2 s): half of min(1 s × 2^attempt, 2 s) plus a random
// part up to that half, so 1 to 2 s from the first retry on.
func (p redissonProfile) retryDelay(attempt int) time.Duration {
	if p.legacyRetry {
		return redissonLegacyRetryInterval
	}
	exp := min(time.Second<<attempt, 2*time.Second)
	half := exp / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

// redissonMasterSync is what syncedEval knows of one master.
type redissonMasterSync struct {
	replicas int
	aof      bool
}

// syncedEval sends sc as Redisson's syncedEval does on a sentinel or cluster master: find the
// master's replicas (per the profile's syncDiscovery), then the script and WAIT <replicas> 1000
// (WAITAOF 1 <replicas> 1000 with the profile's waitAOF on an AOF master) in one batch, and a
// *RedissonNotSyncedError when WAIT counted none of them.
func (t *redissonTransport) syncedEval(ctx context.Context, sc *redissonScript, keys []string, args []any) *redis.Cmd {
	node, addr, err := t.masterClient(ctx, keys[0])
	if err != nil {
		return errCmd(ctx, err)
	}
	p := t.profile
	if p.syncDiscovery != redissonInfoEveryCall {
		ok, err := t.probe(ctx, node)
		if err != nil {
			return errCmd(ctx, err)
		}
		if !ok {
			return t.plain(ctx, sc, keys, args) // WAIT unknown: Redisson sends the script alone
		}
	}
	ms, err := t.masterSync(ctx, node, addr)
	if err != nil {
		return errCmd(ctx, err)
	}
	cmd, synced, err := t.batch(ctx, node, addr, sc, keys, args, ms, true)
	if err != nil {
		return cmd
	}
	switch p.syncDiscovery {
	case redissonInfoCached:
		if synced < ms.replicas {
			t.forget(addr)
		}
	case redissonInfoAllCached:
		if synced != ms.replicas {
			t.forget(addr)
		}
	}
	if synced == 0 && ms.replicas > 0 { // checkLockSyncedSlaves, default true
		return errCmd(ctx, &RedissonNotSyncedError{Key: keys[0], Master: addr, Replicas: ms.replicas,
			Attempts: 1, Message: p.notSyncedMessage()})
	}
	return cmd
}

// probe sends, once per client, what Redisson sends before its first synced call to learn
// which wait commands the server knows: WAIT 0 0 (3.27.0 to 3.43.0, WAIT_SUPPORTED), or WAIT
// 0 0 and WAITAOF 0 0 0 in one batch (3.52.0, waitSupportedCommands; Redis before 7.2 answers
// the WAITAOF with "ERR unknown command", and Redisson then syncs with WAIT only). It reports
// whether WAIT is known.
func (t *redissonTransport) probe(ctx context.Context, node *redis.Client) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock() // Redisson races here; one probe per client is what a quiet start sends
	if t.probed {
		return t.waitKnown, nil
	}
	unknown := func(err error, cmd string) bool {
		return err != nil && strings.HasPrefix(err.Error(), "ERR unknown command") &&
			strings.Contains(strings.ToUpper(err.Error()), cmd)
	}
	if t.profile.syncDiscovery == redissonInfoCached {
		err := node.Do(ctx, "wait", 0, 0).Err()
		if err != nil && !unknown(err, "WAIT") {
			return false, err
		}
		t.probed, t.waitKnown = true, err == nil
		return t.waitKnown, nil
	}
	pipe := node.Pipeline()
	w := pipe.Do(ctx, "wait", 0, 0)
	wa := pipe.Do(ctx, "waitaof", 0, 0, 0)
	_, _ = pipe.Exec(ctx)
	for _, c := range []struct {
		err  error
		name string
	}{{w.Err(), "WAIT"}, {wa.Err(), "WAITAOF"}} {
		if c.err != nil && !unknown(c.err, c.name) {
			return false, c.err // neither unknown: Redisson fails the call and probes again
		}
	}
	t.probed, t.waitKnown, t.waitAOFKnown = true, w.Err() == nil, wa.Err() == nil
	return t.waitKnown, nil
}

// masterSync returns the replicas (and AOF) of the master at addr: from INFO REPLICATION before
// every call (3.21 to 3.26), or from the cache, filled by INFO REPLICATION (3.27 to 3.43) or
// INFO ALL (3.52+) on a miss.
func (t *redissonTransport) masterSync(ctx context.Context, node *redis.Client, addr string) (redissonMasterSync, error) {
	p := t.profile
	if p.syncDiscovery != redissonInfoEveryCall {
		t.mu.Lock()
		ms, ok := t.masters[addr]
		t.mu.Unlock()
		if ok {
			return ms, nil
		}
	}
	section := "replication"
	if p.syncDiscovery == redissonInfoAllCached {
		section = "all"
	}
	info, err := node.Info(ctx, section).Result()
	if err != nil {
		return redissonMasterSync{}, err
	}
	n, _ := strconv.Atoi(infoField(info, "connected_slaves"))
	ms := redissonMasterSync{replicas: n}
	if p.syncDiscovery == redissonInfoAllCached {
		t.mu.Lock()
		ms.aof = t.waitAOFKnown && infoField(info, "aof_enabled") == "1"
		t.mu.Unlock()
	}
	if p.syncDiscovery != redissonInfoEveryCall {
		t.mu.Lock()
		if t.masters == nil {
			t.masters = map[string]redissonMasterSync{}
		}
		t.masters[addr] = ms
		t.mu.Unlock()
	}
	return ms, nil
}

// forget drops the cached replicas of the master at addr (MasterSlaveEntry.setAvailableSlaves(-1)).
func (t *redissonTransport) forget(addr string) {
	t.mu.Lock()
	delete(t.masters, addr)
	t.mu.Unlock()
}

// batch sends the script and, with replicas, WAIT or WAITAOF, in one pipeline on node, as
// CommandBatchService does for syncedEval, and returns the script's reply and the replicas
// the wait counted. Its reply timeout is Redisson's timeout plus slavesSyncTimeout
// (RedisCommonBatchExecutor). A batch that times out or fails on the network is sent again
// after the retry delay up to retryAttempts times: the batch path ignores the lock scripts'
// noRetry (syncedEval passes it only to the plain path), so 3.43 and 3.52 retry here too; in
// the 3.23 profile go-redis's own retries, on for every command, do it. reload says whether a
// NOSCRIPT reply may load the script and send the batch once more.
func (t *redissonTransport) batch(ctx context.Context, node *redis.Client, addr string, sc *redissonScript, keys []string, args []any, ms redissonMasterSync, reload bool) (*redis.Cmd, int, error) {
	p := t.profile
	timeout := RedissonTimeout
	if ms.replicas > 0 {
		timeout += redissonSyncTimeout * time.Millisecond
	}
	c := t.withTimeout(node, timeout)
	if p.evalsha {
		if err := t.loadOnce(ctx, c, addr, sc); err != nil {
			return errCmd(ctx, err), 0, err
		}
	}
	for attempt := 0; ; attempt++ {
		pipe := c.Pipeline()
		var cmd, wait *redis.Cmd
		if p.evalsha {
			cmd = pipe.EvalSha(ctx, sc.sha, keys, args...)
		} else {
			cmd = pipe.Eval(ctx, sc.body, keys, args...)
		}
		if ms.replicas > 0 {
			if ms.aof && p.waitAOF {
				wait = pipe.Do(ctx, "waitaof", 1, ms.replicas, redissonSyncTimeout)
			} else {
				wait = pipe.Do(ctx, "wait", ms.replicas, redissonSyncTimeout)
			}
		}
		_, err := pipe.Exec(ctx)
		if err != nil && p.noScriptRetry && retriable(ctx, err) && attempt < p.retryAttempts() {
			if sleepFor(ctx, p.retryDelay(attempt+1)) != nil {
				return cmd, 0, err
			}
			continue
		}
		if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
			if isNoScript(err) && p.evalsha && reload {
				t.unload(addr, sc) // Redisson loads it and runs syncedEval again
				if lerr := c.ScriptLoad(ctx, sc.body).Err(); lerr == nil {
					t.markLoaded(addr, sc)
					return t.batch(ctx, node, addr, sc, keys, args, ms, false)
				}
			}
			return cmd, 0, err
		}
		if wait == nil {
			return cmd, 0, nil
		}
		return cmd, syncedCount(wait), wait.Err()
	}
}

// withTimeout returns node with the reply timeout d, sharing its pool, made once per node and
// timeout: a clone per call would cost the client an allocation-heavy copy each time.
func (t *redissonTransport) withTimeout(node *redis.Client, d time.Duration) *redis.Client {
	k := redissonTimeoutKey{node, d}
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.timeouts[k]
	if !ok {
		c = node.WithTimeout(d)
		if t.timeouts == nil {
			t.timeouts = map[redissonTimeoutKey]*redis.Client{}
		}
		t.timeouts[k] = c
	}
	return c
}

// redissonTimeoutKey names a node's client with one reply timeout.
type redissonTimeoutKey struct {
	node *redis.Client
	d    time.Duration
}

// syncedCount reads WAIT's reply, or the replicas part (second element) of WAITAOF's.
func syncedCount(wait *redis.Cmd) int {
	switch v := wait.Val().(type) {
	case int64:
		return int(v)
	case []any:
		if len(v) == 2 {
			if n, ok := v[1].(int64); ok {
				return int(n)
			}
		}
	}
	return 0
}

// loadOnce sends SCRIPT LOAD for sc before its first batch on the master at addr, as
// CommandBatchService.loadScripts does with useScriptCache (3.46+): batches carry EVALSHA, and
// the client remembers which scripts it loaded where.
func (t *redissonTransport) loadOnce(ctx context.Context, c *redis.Client, addr string, sc *redissonScript) error {
	t.mu.Lock()
	done := t.loaded[addr+" "+sc.sha]
	t.mu.Unlock()
	if done {
		return nil
	}
	if err := c.ScriptLoad(ctx, sc.body).Err(); err != nil {
		return err
	}
	t.markLoaded(addr, sc)
	return nil
}

func (t *redissonTransport) markLoaded(addr string, sc *redissonScript) {
	t.mu.Lock()
	if t.loaded == nil {
		t.loaded = map[string]bool{}
	}
	t.loaded[addr+" "+sc.sha] = true
	t.mu.Unlock()
}

func (t *redissonTransport) unload(addr string, sc *redissonScript) {
	t.mu.Lock()
	delete(t.loaded, addr+" "+sc.sha)
	t.mu.Unlock()
}

// retriable reports whether err is a timeout or network failure that Redisson answers by
// sending the command again, not a reply from Redis nor the caller's context ending.
func retriable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, redis.Nil) {
		return false
	}
	var re redis.Error
	return !errors.As(err, &re)
}

// sleepFor waits d or until ctx ends.
func sleepFor(ctx context.Context, d time.Duration) error {
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	return sleepCtx(ctx, &t, d)
}

// errCmd is a command that failed with err before it was sent.
func errCmd(ctx context.Context, err error) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(err)
	return cmd
}

// notSynced returns err's *RedissonNotSyncedError, if it is one.
func notSynced(err error) (*RedissonNotSyncedError, bool) {
	var ns *RedissonNotSyncedError
	ok := errors.As(err, &ns)
	return ns, ok
}

// lockSynced runs one lock attempt (call, a lock script through the transport) as RedissonLock's
// tryAcquireAsync0 does: ServiceManager.execute(tryAcquireAsync), where tryAcquireAsync wraps the
// script in handleNoSync. On a shortfall handleNoSync runs undo (the lock's unlockInnerAsync,
// whether or not the script took the lock: its reply is not looked at) and rethrows, and
// execute runs the attempt again after the retry delay, up to retryAttempts times; then the
// shortfall is the lock call's error. The 3.43 profile does neither (noSyncUnhandled). Any
// other error or reply is returned as is. Fair and read-write locks inherit tryAcquireAsync0
// from RedissonLock, so their lock scripts go through this too.
func (l *redissonLocker) lockSynced(ctx context.Context, call func() *redis.Cmd, undo func()) *redis.Cmd {
	p := l.profile
	for attempt := 0; ; attempt++ {
		cmd := call()
		ns, ok := notSynced(cmd.Err())
		if !ok || p.noSyncUnhandled {
			return cmd
		}
		undo()
		ns.Attempts = attempt + 1
		if attempt >= p.retryAttempts() || sleepFor(ctx, p.retryDelay(attempt+1)) != nil {
			return cmd
		}
	}
}

// retrySynced runs call (an unlock) as RedissonBaseLock.unlockAsync does:
// ServiceManager.execute(unlockAsync0), again after the retry delay while it fails with a
// shortfall, up to retryAttempts times (never in the 3.43 profile). With the 3.24+ latch the
// caller keeps one request id across the attempts (3.52 generates it outside execute), so a
// repeat answers the first outcome; 3.23's repeat runs the unlock again.
func (l *redissonLocker) retrySynced(ctx context.Context, call func() *redis.Cmd) *redis.Cmd {
	p := l.profile
	for attempt := 0; ; attempt++ {
		cmd := call()
		ns, ok := notSynced(cmd.Err())
		if !ok || p.noSyncUnhandled {
			return cmd
		}
		ns.Attempts = attempt + 1
		if attempt >= p.retryAttempts() || sleepFor(ctx, p.retryDelay(attempt+1)) != nil {
			return cmd
		}
	}
}

// syncSettings describes the synced path and the retries for Settings.
func (p redissonProfile) syncSettings() (wait, retries string) {
	if !p.syncedWait {
		return "none", "3 (retryAttempts) for every command"
	}
	info := map[redissonSyncDiscovery]string{
		redissonInfoEveryCall: "INFO REPLICATION before every call",
		redissonInfoCached:    "WAIT 0 0 once per client, INFO REPLICATION per master cached until a call syncs fewer",
		redissonInfoAllCached: "WAIT 0 0 + WAITAOF 0 0 0 once per client, INFO ALL per master cached until a call syncs another count",
	}[p.syncDiscovery]
	w := "WAIT <replicas> " + strconv.Itoa(redissonSyncTimeout)
	if p.waitAOF {
		w += " (WAITAOF 1 <replicas> " + strconv.Itoa(redissonSyncTimeout) + " on an AOF master of Redis 7.2+)"
	}
	delay := redissonLegacyRetryInterval.String()
	if !p.legacyRetry {
		delay = "1s-2s (EqualJitterDelay)"
	}
	shortfall := "none synced: the lock undone (its unlock script) and the call retried " + strconv.Itoa(p.retryAttempts()) +
		" times after " + delay + ", then an error"
	if p.noSyncUnhandled {
		shortfall = "none synced: an error at once, the lock left taken (Redisson's message check misses its own exception)"
	}
	wait = "on a sentinel or cluster master: " + info + ", then the lock, unlock or renewal script and " + w +
		" in one batch (syncedEval); " + shortfall
	retries = "3 (retryAttempts) for every command"
	if p.noScriptRetry {
		retries = "0 for lock and unlock scripts sent alone; " + strconv.Itoa(p.retryAttempts()) +
			" after " + delay + " for a batch with WAIT that times out"
	}
	return wait, retries
}
