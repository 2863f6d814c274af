package drivers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	// RedissonSubscribeTimeout bounds the wait for a SUBSCRIBE confirmation, as Redisson's
	// subscriptionTimeout does; a waiter fails with an error when it runs out.
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

// RedissonDriver speaks Redisson's RLock protocol through go-redis v9 the way a Redisson 3.x
// client with default settings does, without lockcore's optimisations: the full script with
// EVAL on every call (useScriptCache was false by default until 3.46.0), a watchdog timer and
// renewal command per held lock (before 3.44 batched them), and waiters that share one
// subscription per lock per client, subscribing when the first waits and unsubscribing when the
// last leaves, retrying on each unlock message or after the lock's PTTL. On a Redis 7 cluster it
// uses SSUBSCRIBE/SPUBLISH, as Redisson does since 3.22.
//
// When Config.Needs includes KindRW its workers are RWWorkers over Redisson's RReadWriteLock
// (redisson_rw.go; Lock is the write lock, as a Mutex and a read-write lock must not share a
// name); every worker is a MultiWorker running Redisson's RedissonMultiLock over RLocks
// (redisson_multi.go). Not reproduced: the WAIT for replicas Redisson adds after lock and unlock
// when the master has replicas (checkLockSyncedSlaves), and the unlock-latch keys of later 3.x
// versions. The registered driver is the zero value; a RedissonDriver value is safe for
// concurrent use.
type RedissonDriver struct {
	// WatchdogTimeout is Redisson's lockWatchdogTimeout: the lease of locks taken when the run
	// sets none, renewed every third of it. Zero means RedissonDefaultLease.
	WatchdogTimeout time.Duration
}

var _ Driver = RedissonDriver{}

func init() { Register(RedissonDriver{}) }

// Name implements Driver.
func (RedissonDriver) Name() string { return "redisson" }

// Kinds implements Driver.
func (RedissonDriver) Kinds() Kind { return KindMutex | KindReentrant | KindRW | KindMulti }

// Open implements Driver. It runs on single, sentinel and cluster; on N independent masters it
// returns an error wrapping ErrUnsupported (Redisson's RedLock is a separate lock kind).
func (d RedissonDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	return openRedisson(ctx, cfg, d.Name(), d.Kinds(), d.WatchdogTimeout, false)
}

// openRedisson opens the go-redis client shared by the Redisson drivers' workers; fair says
// whether they are RedissonFairLocks.
func openRedisson(ctx context.Context, cfg Config, driver string, kinds Kind, watchdogTimeout time.Duration, fair bool) (*redissonLocker, error) {
	t, err := singleNodeTopology(cfg, driver)
	if err != nil {
		return nil, err
	}
	if err := checkNeeds(cfg, driver, kinds); err != nil {
		return nil, err
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
	rdb, err := openGoRedis(ctx, cfg, t, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", driver, err)
	}
	version, err := serverVersion(ctx, rdb)
	if err != nil {
		rdb.Close()
		return nil, fmt.Errorf("%s: server version: %w", driver, err)
	}
	l := &redissonLocker{
		rdb: rdb, topology: t, id: uuid.NewString(), server: version, pool: poolSize(cfg), publish: "publish",
		lease: lease, leaseArg: msString(lease), watchdog: watchdog,
		rw: cfg.Needs&KindRW != 0, multi: cfg.Needs&KindMulti != 0, fair: fair,
	}
	sharded := t == topoCluster && versionAtLeast(version, 7)
	if sharded {
		l.publish = "spublish"
	}
	l.subs = newRedissonSubs(rdb, sharded, poolSize(cfg))
	if l.watchdog {
		l.wd = newRedissonWatchdog(rdb, l.lease)
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
	owners   atomic.Uint64
	closed   atomic.Bool
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
	lease := l.lease.String() + " (no renewal)"
	if l.watchdog {
		lease = l.lease.String() + " renewed every " + (l.lease / 3).String() + ", one timer and one EVAL per held lock"
	}
	pubsub := "SUBSCRIBE/PUBLISH"
	if l.publish == "spublish" {
		pubsub = "SSUBSCRIBE/SPUBLISH (sharded, Redis " + l.server + " cluster)"
	}
	s := map[string]string{
		"library":       "lockbench Redisson lock emulation",
		"lock":          "RLock (RedissonLock)",
		"emulates":      "Redisson 3.22–3.43 defaults (useScriptCache=false, per-lock watchdog timers)",
		"protocol":      "Redisson 3.22–3.43 RedissonLock scripts and key layout",
		"client":        "go-redis " + redis.Version(),
		"topology":      l.topology,
		"pool_size":     strconv.Itoa(l.pool),
		"reply_timeout": goRedisReplyTimeout(),
		"lease":         lease,
		"scripts":       "EVAL with the script body on every call",
		"waiters":       "one subscription per lock per client, subscribed per wait; one wake-up per unlock message; retry after the PTTL",
		"pubsub":        pubsub + ", channels spread over up to " + strconv.Itoa(RedissonSubscriptionConnections) + " connections (Redisson's subscriptionConnectionPoolSize)",
		"not_emulated":  "WAIT for replicas (checkLockSyncedSlaves), unlock-latch keys",
	}
	switch {
	case l.fair:
		s["lock"] = "RedissonFairLock"
		s["protocol"] = "Redisson 3.22–3.43 RedissonFairLock scripts: queue redisson_lock_queue:{name}, deadlines redisson_lock_timeout:{name}"
		s["waiters"] = "FIFO queue, one subscription per waiter on redisson_lock__channel:{name}:<owner>; retry after the TTL the script returns"
		s["fair_wait_time"] = RedissonFairThreadWaitTime.String() + " (threadWaitTime)"
	case l.rw:
		s["lock"] = "RReadWriteLock (RedissonReadLock/RedissonWriteLock): Lock writes, RLock reads"
		s["protocol"] = "Redisson 3.22–3.43 RedissonReadLock/RedissonWriteLock scripts: hash mode + owner fields, per-hold rwlock_timeout keys, channel redisson_rwlock:{name}"
		s["waiters"] = "one subscription per lock per client; a read release (\"0\") wakes one waiter, a write release (\"1\") wakes all"
	}
	if l.multi {
		s["multi_lock"] = "RedissonMultiLock over RLocks: names sorted, one EVAL per lock (no CROSSSLOT); rounds of locks×" +
			RedissonMultiLockWaitPerLock.String() + ", released and retried on a failure"
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
	return l.rdb.Close()
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
	pttl, err := l.rdb.Eval(detach(ctx), redissonLockLua, []string{name}, leaseArg, w.field).Int64()
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
	_, err := l.rdb.Eval(detach(ctx), redissonUnlockLua, []string{name, redissonChannelName(name)},
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
