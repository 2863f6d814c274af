package drivers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// redissonProfile is what one Redisson release does on the wire and in its client, as far as it
// changes the load on Redis or the latency of a lock call. The profiles are written from
// Redisson's source at the tag they name (RedissonLock, RedissonBaseLock, RedissonFairLock,
// RedissonReadLock, RedissonWriteLock, RedissonMultiLock, LockPubSub, PublishSubscribeService,
// CommandAsyncService, LockRenewalScheduler); testdata/redisson-traces holds the command traces
// that pin them.
type redissonProfile struct {
	// version is the Redisson release, "3.23", "3.43", "3.52" or "4.7".
	version string
	// unlockLatch: the unlock scripts read a latch key first and set it with a PX before they
	// return, and the client DELs it after the reply (3.24+), so that an unlock sent again after
	// a lost reply returns the first outcome.
	unlockLatch bool
	// latchDelOther: the client's DEL after an unlock names the latch of the client's id (its
	// UUID), not the script's request id: RedissonBaseLock.unlockInnerAsync at redisson-3.52.0
	// (and 4.0.0–4.2.0) passes its field id to getUnlockLatchName, so the latch keys stay until
	// their PX runs out; 4.3.0 DELs the request's latch ("String id = requestId").
	latchDelOther bool
	// latchPX is the latch's PX: (timeout + retry interval) × retry attempts of the defaults; with
	// latchJitter, its least.
	latchPX time.Duration
	// evalsha: scripts go out as EVALSHA, loaded with SCRIPT LOAD after a NOSCRIPT
	// (useScriptCache true by default since 3.46).
	evalsha bool
	// batchedRenewals: one renewal timer per client renewing up to redissonRenewBatch locks per
	// script (LockRenewalScheduler, 3.44+); before, one timer and one script per held lock.
	batchedRenewals bool
	// syncedWait: on a sentinel or cluster master with replicas, lock, unlock and renewal
	// scripts go out in a batch followed by WAIT <replicas> 1000 (syncedEval, 3.21.0+:
	// RedissonLock, RedissonBaseLock, CommandAsyncService).
	syncedWait bool
	// noScriptRetry: lock and unlock scripts are never sent again after a network failure or
	// timeout (3.43+); before, Redisson's retryAttempts (3) applied to them like to any command.
	// Only when sent alone (a single server): syncedEval's batch with WAIT ignores the flag and
	// is retried (redisson_sync.go).
	noScriptRetry bool
	// fairRetryNonNegative: the fair lock script tells a waiter already queued to retry after
	// max(0, the lock's PTTL), and a negative TTL means retrying at once (3.32+); before, the
	// script answered the time left of the waiter ahead, and a negative one meant waiting for a
	// message only.
	fairRetryNonNegative bool

	// The fields below are the synced path's (issue 39, redisson_sync.go): how syncedEval finds
	// a master's replicas, what it waits with, and what a WAIT shortfall does. Their zero values
	// are the newest behaviour read (3.52.0 and 4.7.0), except waitAOF, whose zero value is the
	// plain WAIT of 4.x.

	// syncDiscovery is how syncedEval learns a master's connected replicas before a lock,
	// unlock or renewal script (CommandAsyncService.syncedEval).
	syncDiscovery redissonSyncDiscovery
	// waitAOF: when the master's INFO says aof_enabled:1, the batch ends with WAITAOF 1
	// <replicas> 1000 instead of WAIT <replicas> 1000 (3.52.0,
	// CommandAsyncService.createCommandBatchService(int, boolean, long)). 4.7.0 reads
	// aof_enabled too but syncs lock scripts (SyncMode.WAIT) with a plain WAIT: zero value.
	waitAOF bool
	// noSyncUnhandled: a WAIT shortfall fails the call at once, with no undo and no retry
	// (3.24.0 to 3.43.0 at least: syncedEval's exception message grew a hint, "None of slaves
	// were synced. Try to increase slavesSyncTimeout…", and no longer equals the "None of slaves
	// were synced" that CommandAsyncService.handleNoSync and ServiceManager.execute compare it
	// with). Zero value: undone and retried (3.21.0–3.23.x by the message, 3.52+ by
	// NoSyncedSlavesException).
	noSyncUnhandled bool
	// legacyRetry: Redisson's retryAttempts is 3 and its retryInterval a constant 1500 ms
	// (BaseConfig at 3.23.0 and 3.43.0). Zero value: retryAttempts 4 and retryDelay
	// EqualJitterDelay(1 s, 2 s), a delay of 1 to 2 s (BaseConfig at 3.52.0 and 4.7.0).
	legacyRetry bool

	// The fields below are issue 39's renewals, multilock, pub/sub, latch and 4.x items (see
	// docs/drivers.md); each names the Redisson class and tag it was read from.

	// readRenewOwners: a batched read-lock renewal asks about every owner of this client holding
	// the lock, with the owner's own timeout keys (ReadLockTask, redisson-4.4.0+); before, about
	// the first owner only, with the 3.x script's shadowed key index (redisson-3.52.0).
	readRenewOwners bool
	// latchJitter: the latch PX is (timeout + retryDelay.calcDelay(retryAttempts)) × retryAttempts
	// with the EqualJitterDelay(1 s, 2 s) default, a random 16 000–20 000 ms per unlock
	// (RedissonBaseLock.unlockInnerAsync, config.EqualJitterDelay at redisson-3.52.0 and 4.7.0).
	latchJitter bool
	// fairLastGuard: the fair lock script queues a new waiter behind the last one only when the
	// last still has a deadline (zscore(last) ~= false), else after the lock's PTTL
	// (RedissonFairLock.tryLockInnerAsync at redisson-3.52.0, not 3.43.0).
	fairLastGuard bool
	// fairLeaveSynced: a waiter that gives up leaves the fair queue through syncedEval, with WAIT
	// on replicated masters (RedissonFairLock.acquireFailedAsync: evalWriteSyncedNoRetryAsync at
	// redisson-3.43.0/3.52.0; plain evalWriteAsync at 3.23.0).
	fairLeaveSynced bool
	// fairLeaveRetry: that leave is sent again after a failure, retryAttempts times
	// (syncedEvalWithRetry, redisson-4.0.0+).
	fairLeaveRetry bool
	// tryLockTimeoutFalse: a response timeout of a lock script in tryLock's wait loop ends the
	// tryLock with false (logged) rather than an error (RedissonLock.tryLock, redisson-4.7.0).
	tryLockTimeoutFalse bool
	// multiUnlockParallel: RedissonMultiLock.unlock sends every lock's unlock, then waits for all
	// (redisson-3.23.x); from 3.27.2 one after another.
	multiUnlockParallel bool
}

// The Redisson releases the driver reproduces; the default is the newest.
var redissonProfiles = []redissonProfile{
	{version: "3.23", latchPX: 0, multiUnlockParallel: true,
		syncedWait: true, syncDiscovery: redissonInfoEveryCall, legacyRetry: true},
	{version: "3.43", unlockLatch: true, latchPX: 13500 * time.Millisecond, syncedWait: true,
		noScriptRetry: true, fairRetryNonNegative: true, fairLeaveSynced: true,
		syncDiscovery: redissonInfoCached, noSyncUnhandled: true, legacyRetry: true},
	{version: "3.52", unlockLatch: true, latchDelOther: true, latchPX: 16 * time.Second, evalsha: true,
		batchedRenewals: true, syncedWait: true, noScriptRetry: true, fairRetryNonNegative: true,
		latchJitter: true, fairLastGuard: true, fairLeaveSynced: true,
		waitAOF: true},
	// 4.7: 3.52 plus the 4.x changes read at redisson-4.0.0 … redisson-4.7.0 (fields below
	// readRenewOwners); on the synced path the zero values are 4.7.0's: INFO ALL with the probe,
	// a plain WAIT rather than WAITAOF for locks, undo and 4 jittered retries.
	{version: "4.7", unlockLatch: true, latchPX: 16 * time.Second, evalsha: true,
		batchedRenewals: true, syncedWait: true, noScriptRetry: true, fairRetryNonNegative: true,
		readRenewOwners: true, latchJitter: true, fairLastGuard: true, fairLeaveSynced: true,
		fairLeaveRetry: true, tryLockTimeoutFalse: true},
}

// RedissonDefaultVersion is the Redisson release the redisson drivers reproduce unless told
// otherwise (the option version=…): 4.7, what a new Java project gets today — redisson-4.7.0
// (2026-08-04) is the newest release tag, 3.52.0 (2025-09-25) the last of 3.x, and 4.x still
// runs on Java 8 (maven.compiler.release 8), so nothing keeps a new project on 3.x.
const RedissonDefaultVersion = "4.7"

// Redisson's client settings that hold in every profile, with its defaults.
const (
	// RedissonCommandConnections is Redisson's connectionPoolSize (masterConnectionPoolSize):
	// 64 connections, each carrying one command at a time.
	RedissonCommandConnections = 64
	// RedissonSubscriptionsPerConnection is subscriptionsPerConnection: channels per pub/sub
	// connection.
	RedissonSubscriptionsPerConnection = 5
	// RedissonSubscriptionConnections is subscriptionConnectionPoolSize: pub/sub connections per
	// master. With RedissonSubscriptionsPerConnection it caps a client at 250 channels.
	RedissonSubscriptionConnections = 50
	// redissonSubscribeLocks is how many semaphores PublishSubscribeService spreads channels over:
	// a subscribe or unsubscribe holds its channel's semaphore until Redis confirms it.
	redissonSubscribeLocks = 50
	// redissonSyncTimeout is the WAIT timeout of syncedEval (slavesSyncTimeout, 1000 ms).
	redissonSyncTimeout = 1000
	// redissonRenewBatch is how many locks one batched renewal script extends (3.44+).
	redissonRenewBatch = 100
)

// redissonProfileNamed returns the profile of version.
func redissonProfileNamed(version string) (redissonProfile, bool) {
	i := slices.IndexFunc(redissonProfiles, func(p redissonProfile) bool { return p.version == version })
	if i < 0 {
		return redissonProfile{}, false
	}
	return redissonProfiles[i], true
}

// redissonVersions lists the profiles' versions, for messages.
func redissonVersions() string {
	v := make([]string, len(redissonProfiles))
	for i, p := range redissonProfiles {
		v[i] = p.version
	}
	return strings.Join(v, "|")
}

// redissonTuning is the redisson drivers' command-line options. The zero value is the default
// profile with Redisson's default pool sizes.
type redissonTuning struct {
	spec           string
	version        string        // "" is RedissonDefaultVersion
	pubsubConns    int           // 0: RedissonSubscriptionConnections
	perConn        int           // 0: RedissonSubscriptionsPerConnection
	conns          int           // 0: RedissonCommandConnections
	subTimeout     time.Duration // 0: RedissonSubscribeTimeout
	fairWaitTimeMs int64         // 0: RedissonFairThreadWaitTime
	watchdog       time.Duration // 0: the driver's WatchdogTimeout, else RedissonDefaultLease
}

var redissonOptions = []Option{
	{"version", "Redisson release whose client behaviour to reproduce: 3.23, 3.43, 3.52 or 4.7 (default " + RedissonDefaultVersion + ")"},
	{"pubsub_conns", "subscriptionConnectionPoolSize: pub/sub connections per master, 1 to 1000 (default " + strconv.Itoa(RedissonSubscriptionConnections) + ")"},
	{"channels_per_conn", "subscriptionsPerConnection: channels per pub/sub connection, 1 to 1000 (default " + strconv.Itoa(RedissonSubscriptionsPerConnection) + ")"},
	{"conns", "connectionPoolSize: command connections, one command in flight each, 1 to 10000 (default " + strconv.Itoa(RedissonCommandConnections) + ")"},
	{"subscribe_timeout", "subscriptionTimeout: how long a subscribe may wait for its lock, a free channel slot and the server's confirmation (default " + RedissonSubscribeTimeout.String() + ")"},
	{"fair_wait", "RedissonFairLock threadWaitTime (redisson-fair; default " + RedissonFairThreadWaitTime.String() + ")"},
	{"watchdog", "lockWatchdogTimeout: lease of locks taken without --lease, renewed every third of it (default " + RedissonDefaultLease.String() + "; at least 3ms)"},
}

// configureRedisson reads the redisson drivers' options.
func configureRedisson(driver, spec string, opts map[string]string) (redissonTuning, error) {
	t := redissonTuning{spec: spec}
	bad := func(k, v, want string) error {
		return fmt.Errorf("%w: %s option %s=%s: %s", ErrBadOption, driver, k, v, want)
	}
	count := func(k, v string, hi int) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > hi {
			return 0, bad(k, v, fmt.Sprintf("want a whole number from 1 to %d", hi))
		}
		return n, nil
	}
	var err error
	for k, v := range opts {
		switch k {
		case "version":
			if _, ok := redissonProfileNamed(v); !ok {
				return t, bad(k, v, "want one of "+redissonVersions())
			}
			t.version = v
		case "pubsub_conns":
			t.pubsubConns, err = count(k, v, 1000)
		case "channels_per_conn":
			t.perConn, err = count(k, v, 1000)
		case "conns":
			t.conns, err = count(k, v, 10000)
		case "watchdog":
			d, perr := time.ParseDuration(v)
			if perr != nil || d < 3*time.Millisecond {
				return t, bad(k, v, "want a duration of at least 3ms, e.g. 1s")
			}
			t.watchdog = d
		case "subscribe_timeout", "fair_wait":
			d, perr := time.ParseDuration(v)
			if perr != nil || d < time.Millisecond {
				return t, bad(k, v, "want a duration of at least 1ms, e.g. 200ms")
			}
			if k == "fair_wait" {
				t.fairWaitTimeMs = d.Milliseconds()
			} else {
				t.subTimeout = d
			}
		}
		if err != nil {
			return t, err
		}
	}
	return t, nil
}

// profile returns the tuning's Redisson profile.
func (t redissonTuning) profile() redissonProfile {
	v := t.version
	if v == "" {
		v = RedissonDefaultVersion
	}
	p, _ := redissonProfileNamed(v)
	return p
}

// orDefault is v, or def when v is zero (an option not given).
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// name is the driver's name in results: its spec when it has options.
func (t redissonTuning) name(driver string) string {
	if t.spec != "" {
		return t.spec
	}
	return driver
}
