package drivers

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Redisson settings the driver reproduces, with Redisson's defaults.
const (
	// RedissonDefaultLease is Redisson's lockWatchdogTimeout: the lease of a lock taken without
	// one, renewed every third of it while held.
	RedissonDefaultLease = 30 * time.Second
	// RedissonSubscribeTimeout is Redisson's subscriptionTimeout: how long a subscription may
	// take to get its channel's subscribe lock, a free slot in the pub/sub pool and the server's
	// confirmation; a waiter fails with an error wrapping ErrRedissonSubscribeTimeout when it
	// runs out (the option subscribe_timeout sets it).
	RedissonSubscribeTimeout = 7500 * time.Millisecond
	// redissonUnlockMessage is what a full release publishes (Redisson's LockPubSub.UNLOCK_MESSAGE):
	// it wakes one waiter.
	redissonUnlockMessage = "0"
	// redissonReadUnlockMessage is what the release of a read-write lock's write lock publishes
	// (LockPubSub.READ_UNLOCK_MESSAGE): it wakes every waiter, as readers may all proceed.
	redissonReadUnlockMessage = "1"
)

// The RLock scripts, written for lockbench with Redisson's semantics, key layout and replies (the
// same protocol lockcore speaks, so that the two exclude each other).

// redissonLockLua takes the lock if it is free, or counts one more hold if the owner has it.
// KEYS[1] lock; ARGV[1] lease ms; ARGV[2] owner field. Returns nil when held, else the lock's PTTL.
const redissonLockLua = `
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])`

// redissonUnlockLua releases one hold; the last one deletes the lock and announces it.
// KEYS[1] lock, KEYS[2] channel; ARGV[1] unlock message, ARGV[2] lease ms, ARGV[3] owner field,
// ARGV[4] publish command. Returns nil when the owner does not hold the lock, 0 when holds
// remain, 1 when released.
const redissonUnlockLua = `
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
  return nil
end
local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if holds > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[4], KEYS[2], ARGV[1])
return 1`

// RedissonDriver speaks Redisson's RLock protocol through go-redis v9 the way a Redisson 3.x or 4.x
// client of one release (a profile: option version, default RedissonDefaultVersion) with
// default settings does, without lockcore's optimisations. Per profile (redisson_profile.go):
// EVAL with the body on every call, or EVALSHA from 3.46; the unlock latch of 3.24+ (a GET and
// a SET … PX in each unlock script and a DEL after it); a watchdog timer and renewal script per
// held lock, or batched renewals from 3.44; WAIT after lock, unlock and renewal calls on a
// sentinel or cluster master with replicas from 3.21 (redisson_sync.go: INFO REPLICATION before
// each in 3.23, cached from 3.27; a call no replica acknowledged undone and retried, or in 3.43
// failed at once); no resending of lock and unlock scripts sent alone from 3.43. In every profile: 64 command connections with one command in flight each, waiters
// that share one subscription per lock per client (subscribing when the first waits and
// unsubscribing when the last leaves, retrying on each unlock message or after the lock's
// PTTL), Redisson's pub/sub limits (5 channels per connection, 50 connections, subscribes and
// unsubscribes of every waiter through 50 semaphores, held until the server confirms, subscribe
// timeouts beyond the cap), and SSUBSCRIBE/SPUBLISH on a Redis 7 cluster.
//
// When Config.Needs includes KindRW its workers are RWWorkers over Redisson's RReadWriteLock
// (redisson_rw.go; Lock is the write lock, as a Mutex and a read-write lock must not share a
// name); every worker is a MultiWorker running Redisson's RedissonMultiLock over RLocks
// (redisson_multi.go). It models Redis-side load and latency, not the Java client's CPU. The
// registered driver is the zero value; a RedissonDriver value is safe for concurrent use.
type RedissonDriver struct {
	// WatchdogTimeout is Redisson's lockWatchdogTimeout: the lease of locks taken when the run
	// sets none, renewed every third of it. Zero means RedissonDefaultLease.
	WatchdogTimeout time.Duration
	tune            redissonTuning
}

var (
	_ Driver       = RedissonDriver{}
	_ Configurable = RedissonDriver{}
)

func init() { Register(RedissonDriver{}) }

// Name implements Driver.
func (d RedissonDriver) Name() string { return d.tune.name("redisson") }

// Kinds implements Driver.
func (RedissonDriver) Kinds() Kind { return KindMutex | KindReentrant | KindRW | KindMulti }

// Options implements Configurable.
func (RedissonDriver) Options() []Option { return redissonOptions }

// Configure implements Configurable.
func (d RedissonDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	t, err := configureRedisson("redisson", spec, opts)
	if err != nil {
		return nil, err
	}
	d.tune = t
	return d, nil
}

// Open implements Driver. It runs on single, sentinel and cluster; on N independent masters it
// returns an error wrapping ErrUnsupported (Redisson's RedLock is a separate lock kind).
func (d RedissonDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	return openRedisson(ctx, cfg, d.Name(), d.Kinds(), d.WatchdogTimeout, false, d.tune)
}

// openRedisson opens the go-redis client shared by the Redisson drivers' workers; fair says
// whether they are RedissonFairLocks.
func openRedisson(ctx context.Context, cfg Config, driver string, kinds Kind, watchdogTimeout time.Duration, fair bool, tune redissonTuning) (*redissonLocker, error) {
	t, err := singleNodeTopology(cfg, driver)
	if err != nil {
		return nil, err
	}
	if err := checkNeeds(cfg, driver, kinds); err != nil {
		return nil, err
	}
	if watchdogTimeout <= 0 {
		watchdogTimeout = tune.watchdog
	}
	lease, watchdog := cfg.Lease, false
	if lease <= 0 {
		lease, watchdog = watchdogTimeout, true
		if lease <= 0 {
			lease = RedissonDefaultLease
		}
	}
	if lease < 3*time.Millisecond {
		return nil, fmt.Errorf("%s: lease %v is below 3ms", driver, lease)
	}
	profile := tune.profile()
	retries := 0 // go-redis's 3, as Redisson's retryAttempts
	if profile.noScriptRetry {
		retries = -1
	}
	pool := orDefault(tune.conns, RedissonCommandConnections)
	rdb, err := openGoRedisTimeout(ctx, cfg, t, retries, pool, RedissonTimeout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", driver, err)
	}
	version, err := serverVersion(ctx, rdb)
	if err != nil {
		rdb.Close()
		return nil, fmt.Errorf("%s: server version: %w", driver, err)
	}
	l := &redissonLocker{
		rdb: rdb, topology: t, id: uuid.NewString(), server: version, pool: pool, publish: "publish",
		lease: lease, leaseArg: msString(lease), watchdog: watchdog,
		rw: cfg.Needs&KindRW != 0, multi: cfg.Needs&KindMulti != 0, fair: fair,
		profile: profile, tune: tune,
		tr:       &redissonTransport{rdb: rdb, topology: t, profile: profile},
		fairWait: orDefault(tune.fairWaitTimeMs, RedissonFairThreadWaitTime.Milliseconds()),
	}
	sharded := t == topoCluster && versionAtLeast(version, 7)
	if sharded {
		l.publish = "spublish"
	}
	l.subs = newRedissonSubs(rdb, sharded, redissonSubsLimits{
		perConn:  orDefault(tune.perConn, RedissonSubscriptionsPerConnection),
		maxConns: orDefault(tune.pubsubConns, RedissonSubscriptionConnections),
		timeout:  orDefault(tune.subTimeout, RedissonSubscribeTimeout),
	})
	if l.watchdog {
		l.wd = newRedissonWatchdog(l.tr, l.lease)
	}
	return l, nil
}

type redissonLocker struct {
	rdb      redis.UniversalClient
	topology string
	server   string // redis_version
	id       string // the client UUID, first half of every owner field
	pool     int
	publish  string // "publish", or "spublish" on a Redis 7 cluster
	lease    time.Duration
	leaseArg string
	watchdog bool
	rw       bool // workers are RWWorkers: Lock is RReadWriteLock's write lock
	multi    bool // the run uses LockMulti (recorded in Settings)
	fair     bool // workers lock RedissonFairLocks
	subs     *redissonSubs
	wd       *redissonWatchdog // nil with an explicit lease
	profile  redissonProfile
	tune     redissonTuning
	tr       *redissonTransport
	fairWait int64 // RedissonFairLock threadWaitTime, ms
	// latchDels are the unlock latches' DELs in flight: Redisson sends them after the unlock
	// reply without waiting for theirs.
	latchDels sync.WaitGroup
	owners    atomic.Uint64
	closed    atomic.Bool
	// attempts and failed count RLock attempts (not the fair or read-write locks'), for Counters.
	attempts, failed atomic.Int64
}

// Counters implements CountingLocker: the RLock's attempts. Fair and read-write locks are not
// counted, and report none.
func (l *redissonLocker) Counters() Counters {
	return Counters{Attempts: l.attempts.Load(), FailedAttempts: l.failed.Load()}
}

func (l *redissonLocker) NewWorker() Worker {
	w := redissonWorker{l: l, field: l.id + ":" + strconv.FormatUint(l.owners.Add(1), 10)}
	switch {
	case l.fair:
		return &redissonFairWorker{base: w}
	case l.rw:
		return &redissonRWWorker{redissonWorker: w}
	}
	return &w
}

func (l *redissonLocker) Settings() map[string]string {
	p := l.profile
	lease := l.lease.String() + " (no renewal)"
	if l.watchdog {
		lease = l.lease.String() + " renewed every " + (l.lease / 3).String() + ", one timer and one script per held lock"
		if p.batchedRenewals {
			lease = l.lease.String() + " renewed by one timer for locks and one for read locks, each re-armed " + (l.lease / 3).String() +
				" after its run ends; a run sends up to " + strconv.Itoa(redissonRenewBatch) +
				" locks per script, one script after another (per slot on a cluster); a failed script keeps the locks for the next run"
		}
	}
	pubsub := "SUBSCRIBE/PUBLISH"
	if l.publish == "spublish" {
		pubsub = "SSUBSCRIBE/SPUBLISH (sharded, Redis " + l.server + " cluster)"
	}
	scripts := "EVAL with the script body on every call (useScriptCache=false)"
	if p.evalsha {
		scripts = "EVALSHA, SCRIPT LOAD after NOSCRIPT (useScriptCache=true)"
	}
	unlock := "one script"
	if p.unlockLatch {
		px := p.latchPX.String()
		if p.latchJitter {
			px = "random " + px + "–" + (p.latchPX + 4*time.Second).String()
		}
		unlock = "script with a latch key (GET, SET … PX " + px + ") then DEL of the latch"
		if p.latchDelOther {
			unlock = "script with a latch key (GET, SET … PX " + px + ") then DEL of the latch named by the client id, not the request's: latches stay until their PX"
		}
	}
	wait, retries := p.syncSettings() // redisson_sync.go
	lim := l.subs.limits
	s := map[string]string{
		"library":        "lockbench Redisson lock emulation",
		"profile":        "Redisson " + p.version,
		"lock":           "RLock (RedissonLock)",
		"emulates":       "Redisson " + p.version + " with default settings: Redis-side commands and latency, not the Java client's CPU",
		"protocol":       "Redisson " + p.version + " RedissonLock scripts and key layout",
		"client":         "go-redis " + redis.Version(),
		"topology":       l.topology,
		"pool_size":      strconv.Itoa(l.pool) + " command connections, one command in flight each",
		"reply_timeout":  RedissonTimeout.String() + " (Redisson's timeout; go-redis ReadTimeout and WriteTimeout), " + (RedissonTimeout + redissonSyncTimeout*time.Millisecond).String() + " for a batch with WAIT",
		"lease":          lease,
		"scripts":        scripts,
		"unlock":         unlock,
		"replica_wait":   wait,
		"script_retries": retries,
		"waiters":        "one subscription per lock per client, subscribed per wait; one wake-up per unlock message; retry after the PTTL",
		"not_emulated":   "the Java client's CPU and memory; a second renewal timer Redisson 3.44+ leaves running when the last lock is released and another taken before the timer fires",
		"pubsub": pubsub + ", " + strconv.Itoa(lim.perConn) + " channels per connection, up to " + strconv.Itoa(lim.maxConns) +
			" connections per master; every waiter's subscribe and unsubscribe takes one of " + strconv.Itoa(redissonSubscribeLocks) +
			" channel semaphores, which the first subscribe and the last unsubscribe hold until confirmed; subscribe timeout " + lim.timeout.String(),
	}
	switch {
	case l.fair:
		s["lock"] = "RedissonFairLock"
		s["protocol"] = "Redisson " + p.version + " RedissonFairLock scripts: queue redisson_lock_queue:{name}, deadlines redisson_lock_timeout:{name}"
		s["waiters"] = "FIFO queue, one subscription per waiter on redisson_lock__channel:{name}:<owner>; retry after the TTL the script returns"
		if p.fairRetryNonNegative {
			s["waiters"] += " (at once when negative)"
		} else {
			s["waiters"] += " (a message only when negative)"
		}
		s["fair_wait_time"] = (time.Duration(l.fairWait) * time.Millisecond).String() + " (threadWaitTime)"
	case l.rw:
		s["lock"] = "RReadWriteLock (RedissonReadLock/RedissonWriteLock): Lock writes, RLock reads"
		s["protocol"] = "Redisson " + p.version + " RedissonReadLock/RedissonWriteLock scripts: hash mode + owner fields, per-hold rwlock_timeout keys, channel redisson_rwlock:{name}"
		s["waiters"] = "one subscription per lock per client; a read release (\"0\") wakes one waiter, a write release (\"1\") wakes the waiters blocked at that moment"
	}
	multiRelease := "released one lock after another, stopping at the first failure (3.27.2+)"
	if p.multiUnlockParallel {
		multiRelease = "released all at once, then each reply awaited (before 3.27.2)"
	}
	if l.multi {
		s["multi_lock"] = "RedissonMultiLock over RLocks: names sorted, one script per lock (no CROSSSLOT); rounds of locks×" +
			RedissonMultiLockWaitPerLock.String() + ", released and retried on a failure; " + multiRelease
	}
	return s
}

func (l *redissonLocker) Close() error {
	if !l.closed.CompareAndSwap(false, true) {
		return nil
	}
	if l.wd != nil {
		l.wd.close()
	}
	l.subs.close()
	l.latchDels.Wait()
	return l.rdb.Close()
}

// unlockCall runs an unlock script (sc, or latched, its 3.24+ form, when the profile has the
// unlock latch) for lock name: the latch is one more key and PX one more argument, and after the
// reply the client DELs a latch without waiting for the DEL's reply.
//
// A shortfall of the replicas' acknowledgements runs the script again with the same request id
// (RedissonBaseLock.unlockAsync: ServiceManager.execute; see retrySynced).
func (l *redissonLocker) unlockCall(ctx context.Context, name string, sc, latched *redissonScript, keys []string, args ...any) *redis.Cmd {
	return l.unlockSend(ctx, true, name, sc, latched, keys, args...)
}

// unlockSend is unlockCall, with retry false the once-only unlockInnerAsync that undoes a lock
// call whose replicas did not acknowledge (handleNoSync; see lockSynced).
func (l *redissonLocker) unlockSend(ctx context.Context, retry bool, name string, sc, latched *redissonScript, keys []string, args ...any) *redis.Cmd {
	p := l.profile
	eval := func(sc *redissonScript, keys []string, args []any) *redis.Cmd {
		call := func() *redis.Cmd { return l.tr.eval(ctx, true, sc, keys, args...) }
		if !retry {
			return call()
		}
		return l.retrySynced(ctx, call)
	}
	if !p.unlockLatch {
		return eval(sc, keys, args)
	}
	id := redissonRequestID()
	keys = append(keys[:len(keys):len(keys)], redissonUnlockLatchName(name, id))
	px := p.latchPX
	if p.latchJitter {
		// (3000 + 1000 + [0, 1000]) × 4 ms: EqualJitterDelay's half plus a random half.
		px += 4 * time.Duration(mrand.Int64N(1001)) * time.Millisecond
	}
	args = append(args, msString(px))
	cmd := eval(latched, keys, args)
	if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
		return cmd // Redisson's DEL follows a reply only (thenApply)
	}
	if p.latchDelOther {
		id = l.id // 3.52: RedissonBaseLock's field id, the client's UUID
	}
	l.latchDels.Add(1)
	go func() {
		defer l.latchDels.Done()
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RedissonSubscribeTimeout)
		defer cancel()
		l.rdb.Del(dctx, redissonUnlockLatchName(name, id))
	}()
	return cmd
}

// redissonWorker is one owner, the role of a Java thread: its field is "<client UUID>:<n>". Its
// Lock and Unlock are an RLock's.
type redissonWorker struct {
	l     *redissonLocker
	field string
	timer *time.Timer
	multi []string // LockMulti's names in lock order
}

var _ MultiWorker = (*redissonWorker)(nil)

func (w *redissonWorker) Lock(ctx context.Context, name string) error {
	_, err := w.acquire(ctx, redissonChannelName(name), -1, func() (time.Duration, bool, error) {
		return w.try(ctx, name, w.l.leaseArg, w.l.wd != nil)
	})
	return err
}

// try runs the lock script once with leaseArg, renewing the lock by the watchdog if watchdog.
// It reports whether the worker now holds the lock, and otherwise the lock's PTTL (negative if
// it has none).
func (w *redissonWorker) try(ctx context.Context, name, leaseArg string, watchdog bool) (time.Duration, bool, error) {
	l := w.l
	l.attempts.Add(1)
	pttl, err := l.lockSynced(ctx, func() *redis.Cmd {
		return l.tr.eval(detach(ctx), true, rsLock, []string{name}, leaseArg, w.field)
	}, func() {
		l.unlockSend(detach(ctx), false, name, rsUnlock, rsUnlockLatched, []string{name, redissonChannelName(name)},
			redissonUnlockMessage, l.leaseArg, w.field, l.publish)
	}).Int64()
	if err == nil {
		l.failed.Add(1)
	}
	if errors.Is(err, redis.Nil) {
		if watchdog && l.wd != nil {
			l.wd.add(name, renewLock, w.field)
		}
		return 0, true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("redisson: lock %q: %w", name, err)
	}
	return time.Duration(pttl) * time.Millisecond, false, nil
}

func (w *redissonWorker) Unlock(ctx context.Context, name string) error {
	l := w.l
	_, err := l.unlockCall(detach(ctx), name, rsUnlock, rsUnlockLatched, []string{name, redissonChannelName(name)},
		redissonUnlockMessage, l.leaseArg, w.field, l.publish).Int64()
	if l.wd != nil {
		l.wd.remove(name, renewLock, w.field)
	}
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("%w: %q is not held by %s", ErrNotHeld, name, w.field)
	}
	if err != nil {
		return fmt.Errorf("redisson: unlock %q: %w", name, err)
	}
	return nil
}

// The RLock's scripts as sent.
var (
	rsLock          = newRedissonScript(redissonLockLua)
	rsUnlock        = newRedissonScript(redissonUnlockLua)
	rsUnlockLatched = newRedissonScript(withUnlockLatch(redissonUnlockLua))
)

// redissonChannelName returns the unlock channel Redisson uses for the lock name: the prefix plus the
// name in a hash tag, unless the name has one already, so that in a cluster the channel lives in
// the lock's slot.
func redissonChannelName(name string) string {
	if strings.Contains(name, "{") {
		return "redisson_lock__channel:" + name
	}
	return "redisson_lock__channel:{" + name + "}"
}

// msString formats d in whole milliseconds, as the scripts take leases.
func msString(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
