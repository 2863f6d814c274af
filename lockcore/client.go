package lockcore

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/lockbench/lockbench/internal/lockhooks"
	"github.com/redis/rueidis"
)

// Client is a lock engine bound to one Redis deployment. It is safe for concurrent use; create
// one per process and share it, so that waiters and renewals are coalesced across goroutines.
type Client struct {
	rdb       rueidis.Client
	ownClient bool
	opt       Options
	leaseArg  string // opt.LeaseTime in ms, formatted once for the hot path
	// pubsub is the resolved mode (never PubSubAuto); publishCmd is how unlock scripts announce
	// a release in it: "publish", or "spublish" on a Redis 7 cluster, as Redisson does.
	pubsub     PubSubMode
	publishCmd string
	node       string // the deployment's addresses, for NodeError (node.go)

	owners  atomic.Uint64
	holds   holdTable
	waiters waitTable
	doubts  doubtSet
	retired atomic.Bool // some field was retired: look fields up (doubt.go)
	batch   batcher
	repl    syncer // synced mode (sync.go)

	ctx      context.Context // canceled by Close; stops background work
	cancel   context.CancelFunc
	bg       sync.WaitGroup
	closeMu  sync.Once
	closed   atomic.Bool
	renewals atomic.Int64
	stats    counters
	epoch    time.Time // origin of now(); time.Since uses the monotonic clock

	// beforeSettle, if set (by tests, before the Client is used), is called in Mutex.Unlock
	// between the release's reply and settle, to let the resolver run in that window.
	beforeSettle func()
}

// New returns a Client. It connects (or takes opt.Client) and starts the watchdog.
func New(opt Options) (*Client, error) {
	if err := opt.fill(); err != nil {
		return nil, err
	}
	c := &Client{opt: opt, rdb: opt.Client, epoch: time.Now()}
	if c.rdb == nil {
		ro := opt.Redis
		// Client-side caching is of no use to locks and costs a CLIENT TRACKING per connection.
		ro.DisableCache = true
		if ro.MaxFlushDelay == 0 {
			ro.MaxFlushDelay = DefaultMaxFlushDelay
		}
		// rueidis prefers DialCtxFn to the deprecated DialFn: a caller's DialFn must not be
		// overridden by ours.
		if ro.DialCtxFn == nil && ro.DialFn == nil && !opt.StandardConnIO && rawDial != nil {
			ro.DialCtxFn = rawDial
		}
		rdb, err := rueidis.NewClient(ro)
		if err != nil {
			return nil, err
		}
		c.rdb, c.ownClient = rdb, true
	}
	if c.opt.ID == "" {
		c.opt.ID = uuid.NewString()
	}
	c.leaseArg = msArg(c.opt.LeaseTime)
	c.node = c.nodeName()
	c.pubsub = opt.PubSub
	if c.pubsub == PubSubAuto {
		mode, err := detectPubSub(c.rdb)
		if err != nil {
			if c.ownClient {
				c.rdb.Close()
			}
			return nil, err
		}
		c.pubsub = mode
	}
	c.publishCmd = "publish"
	if c.pubsub == PubSubSharded {
		c.publishCmd = "spublish"
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.holds.init()
	c.waiters.init(c)
	c.doubts.init()
	c.batch.init(c.rdb.Mode() == rueidis.ClientModeCluster)
	if err := c.startSync(); err != nil {
		c.cancel()
		if c.ownClient {
			c.rdb.Close()
		}
		return nil, err
	}
	c.bg.Add(2)
	go c.watchdog()
	go c.resolver()
	return c, nil
}

// startSync resolves Options.Sync and, unless it is off, learns the masters' replicas before
// the first lock call and starts refreshing them. On a cluster it also learns which master
// serves each slot, and whether batches may span slots (cluster.go), and keeps both fresh: an
// unsynced Client whose first view fails starts with batches per slot.
func (c *Client) startSync() error {
	c.repl.mode = c.opt.Sync
	if c.repl.mode == SyncAuto {
		c.repl.mode = SyncWait
	}
	c.repl.timeout = c.opt.SyncTimeout.Milliseconds()
	if c.batch.cluster && (c.opt.knobs.NoBatch || c.opt.slotBatches) {
		c.batch.cross.Store(crossOff)
	}
	if c.repl.mode == SyncOff && (!c.batch.cluster || c.batch.cross.Load() == crossOff) {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.ctx, detectTimeout)
	defer cancel()
	if err := c.refreshReplicas(ctx); err != nil && c.repl.mode != SyncOff {
		return err
	}
	if c.batch.cluster {
		c.probeCross(ctx)
	}
	c.bg.Add(1)
	go c.syncRefresher()
	return nil
}

// Sync returns the synced mode the Client runs in (SyncWait, SyncAOF or SyncOff; never
// SyncAuto) and how many replicas the master of key had connected at the last refresh: lock
// calls on key wait for that many when the mode is not SyncOff and it is above 0.
func (c *Client) Sync(key string) (SyncMode, int) {
	n, _ := c.replicasFor(key)
	return c.repl.mode, int(n)
}

// ID returns the client identity written as the first part of every hash field.
func (c *Client) ID() string { return c.opt.ID }

// Redis returns the underlying rueidis client.
func (c *Client) Redis() rueidis.Client { return c.rdb }

// NewOwner returns a fresh Owner, distinct from every other Owner of this Client.
func (c *Client) NewOwner() Owner {
	return c.OwnerWithID(c.owners.Add(1))
}

// OwnerWithID returns the Owner whose hash field is "<client id>:<id>", as a Redisson client
// with the same id would write for thread id. Owners made by NewOwner count up from 1; to mix
// the two, pick ids that NewOwner will not reach.
func (c *Client) OwnerWithID(id uint64) Owner {
	return Owner{field: c.opt.ID + ":" + strconv.FormatUint(id, 10)}
}

// PubSub returns the pub/sub mode the Client uses for unlock messages: PubSubClassic or
// PubSubSharded, never PubSubAuto.
func (c *Client) PubSub() PubSubMode { return c.pubsub }

// counters are the live lockhooks.Stats.
type counters struct {
	attempts, failed, handoffs, passes, yields atomic.Int64
	batches, batchedOps, queued, queueWait     atomic.Int64
	doubts, resolved, refused                  atomic.Int64
	subscribes, unsubscribes, channels, peak   atomic.Int64
	wakeUps, timedWaits                        atomic.Int64
	// cutShort counts hold-backs ended early by another client's release (waitTable.holdBack).
	cutShort atomic.Int64
	// syncWaits counts the WAITs sent (sync.go); notSynced the calls they did not confirm.
	syncWaits, notSynced atomic.Int64
	// nodeBatches counts the batches that went as one call across slots of a cluster master;
	// resent the operations a master did not run and that went again per slot (cluster.go).
	nodeBatches, resent atomic.Int64
	// redirects counts the MOVED and ASK replies synced calls on a cluster followed
	// (sync_cluster.go).
	redirects atomic.Int64
	// renewFailed counts renewals that failed (unanswered in time, or not synced) and were
	// retried; renewGone those that found the lock no longer held (watchdog.go), so that a lost
	// lease says whether the watchdog tried.
	renewFailed, renewGone atomic.Int64
}

// channelUp counts a confirmed subscription in the live channels and their peak.
func (s *counters) channelUp() {
	n := s.channels.Add(1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// snapshot returns the Client's counts so far (lockhooks.ClientStats).
func (c *Client) snapshot() lockhooks.Stats {
	q := c.stats.queued.Load()
	return lockhooks.Stats{
		Attempts:       c.stats.attempts.Load(),
		FailedAttempts: c.stats.failed.Load(),
		Handoffs:       c.stats.handoffs.Load(),
		Passes:         c.stats.passes.Load(),
		Yields:         c.stats.yields.Load(),
		Doubts:         c.stats.doubts.Load(),
		Resolved:       c.stats.resolved.Load(),
		Refused:        c.stats.refused.Load(),
		Batches:        c.stats.batches.Load(),
		Queued:         q,
		BatchedOps:     c.stats.batchedOps.Load(),
		QueueWait:      batchWait(c.stats.queueWait.Load(), q),
		Subscribes:     c.stats.subscribes.Load(),
		Unsubscribes:   c.stats.unsubscribes.Load(),
		Channels:       c.stats.channels.Load(),
		PeakChannels:   c.stats.peak.Load(),
		WakeUps:        c.stats.wakeUps.Load(),
		TimedWaits:     c.stats.timedWaits.Load(),
		SyncWaits:      c.stats.syncWaits.Load(),
		NotSynced:      c.stats.notSynced.Load(),
	}
}

// renewalCount returns how many lease renewals the watchdog has sent (lockhooks.Renewals).
func (c *Client) renewalCount() int64 { return c.renewals.Load() }

// Close stops the watchdog and the subscriptions and, if New built the rueidis client, closes it.
// Locks still held are not released; their leases run out. Close is idempotent.
func (c *Client) Close() {
	c.closeMu.Do(func() {
		// Under the waiter table's mutex, so that no waiter starts a subscription goroutine
		// (bg.Add) once bg.Wait may have begun: see waitTable.join.
		c.waiters.mu.Lock()
		c.closed.Store(true)
		c.waiters.mu.Unlock()
		c.cancel()
		c.bg.Wait()
		if c.ownClient {
			c.rdb.Close()
		}
	})
}

// Owner identifies one lock holder, the role a thread id plays in Redisson. Owners are values;
// copies are the same owner. An Owner must not take or release locks from two goroutines at once.
type Owner struct {
	field string
}

// IsZero reports whether o was not made by a Client.
func (o Owner) IsZero() bool { return o.field == "" }

// Field returns the hash field this owner writes in Redis: "<client id>:<owner id>".
func (o Owner) Field() string { return o.field }

// msArg formats d in whole milliseconds for a script, rounded up (see ceilMs).
func msArg(d time.Duration) string {
	return strconv.FormatInt(ceilMs(d).Milliseconds(), 10)
}
