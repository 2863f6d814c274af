package lockcore

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/internal/lockhooks"
	"github.com/redis/rueidis"
)

// Defaults for Options, as Redisson has them.
const (
	// DefaultLeaseTime is the lease of a lock taken without an explicit lease; the watchdog
	// renews it while the lock is held (Redisson's lockWatchdogTimeout).
	DefaultLeaseTime = 30 * time.Second
	// DefaultRetryFloor is the longest a waiter sleeps between attempts when the lock it waits
	// for has no TTL (a foreign lock without expiry), where the returned PTTL gives no bound.
	DefaultRetryFloor = 100 * time.Millisecond
	// DefaultMaxFlushDelay is the rueidis MaxFlushDelay New sets on a client it builds: the
	// pipeline waits up to this long to gather more commands into one write. Under load it cuts
	// the write syscalls that dominate client CPU (measured with lockbench run and pprof: 65% of
	// client time in write at 0); 20µs gave the highest throughput and lowest p99 of 0–100µs.
	DefaultMaxFlushDelay = 20 * time.Microsecond
	// DefaultHandoffLimit is how many times in a row a lock may pass between goroutines of one
	// Client without going through Redis (see Options.HandoffLimit).
	DefaultHandoffLimit = 64
	// DefaultHandoffWindow is the longest a lock stays in one Client by hand-overs before it is
	// released through Redis (see Options.HandoffWindow).
	DefaultHandoffWindow = 20 * time.Millisecond
	// DefaultHandoffYield is how long a Client's next local waiter first holds back after a
	// release heard by waiters outside the Client (see Options.HandoffYield).
	DefaultHandoffYield = 2 * time.Millisecond
	// DefaultMaxBatch bounds the operations of one batch script call (see Options.MaxBatch): on
	// W1 (64 workers) calls of 16 or 32 beat 48 and more by 5–15%, since two calls in a burst
	// let Redis start on the first while the client writes the second; 32 costs Redis less. A
	// gathered queue shorter than that still goes out in two calls once it holds 16 (see
	// batch.go's takeQueue).
	DefaultMaxBatch = 32
)

// Options configure a Client. The zero value of every field means its default.
type Options struct {
	// Client is the rueidis client to use. If nil, New builds one from Redis and the Client
	// closes it on Close; a client passed in here is left open.
	Client rueidis.Client
	// Redis configures the client New builds when Client is nil. New sets DisableCache, and
	// MaxFlushDelay to DefaultMaxFlushDelay when zero (negative: flush at once). The delay
	// gathers the writes of calls that do not batch (RWLock, FairLock, Mutex with batching
	// off) and costs batched Mutex calls where the process has more than one P: a Client
	// that takes only Mutex locks, with GOMAXPROCS above one on CPUs it shares with Redis,
	// may do better without it (docs/findings.md, "The flush delay at two Ps").
	Redis rueidis.ClientOption
	// ID is this client's identity, the first half of every hash field it writes ("<ID>:<owner>").
	// Default: a random UUID, as Redisson's connection manager id.
	ID string
	// LeaseTime is the lease for locks taken without one; they are renewed by the watchdog.
	// Default DefaultLeaseTime. At least 1 ms (New refuses less); a fraction of a millisecond is
	// rounded up, as Redis keeps leases in whole milliseconds.
	LeaseTime time.Duration
	// RenewInterval is how often the watchdog renews held locks. Default LeaseTime/3.
	RenewInterval time.Duration
	// RetryFloor bounds a waiter's sleep when the lock has no TTL. Default DefaultRetryFloor.
	RetryFloor time.Duration
	// PubSub selects classic or sharded pub/sub for unlock messages. Default PubSubAuto: sharded
	// on a Redis 7+ cluster, classic elsewhere (one INFO query in New).
	PubSub PubSubMode

	// Sync says whether lock, unlock and renewal calls are confirmed only once the master's
	// replicas acknowledge them (see sync.go and SyncMode). Default SyncAuto: one WAIT per
	// pipeline of scripts on a master with connected replicas, as Redisson waits after every
	// script (checkLockSyncedSlaves); SyncOff never waits.
	Sync SyncMode
	// SyncTimeout is the WAIT's timeout: a call whose replicas have not all acknowledged by then
	// fails with an error wrapping ErrNotSynced. Default DefaultSyncTimeout; whole milliseconds,
	// rounded up.
	SyncTimeout time.Duration
	// SyncRefresh is how often the Client asks the masters how many replicas they have and,
	// on a cluster, which master serves each slot (see cluster.go). Default DefaultSyncRefresh.
	SyncRefresh time.Duration

	// MaxBatch bounds the operations of one batch script call: more queued go out as several
	// calls. Default DefaultMaxBatch; 2 to 128.
	MaxBatch int

	// knobs are lockbench's switches that turn optimisations off for comparison, set through
	// internal/lockhooks, so that they are no part of the API (see hooks.go).
	knobs lockhooks.Knobs
	// slotBatches keeps a cluster's batches per hash slot, as before batches spanned the slots
	// of a master (cluster.go): for tests that compare the two.
	slotBatches bool

	// HandoffLimit bounds how many times in a row a Mutex passes from one goroutine of this
	// Client to the next queued one inside the process, with no Redis round trip, before a
	// release goes through Redis so that other clients get their turn. Default
	// DefaultHandoffLimit; negative: never hand over (strict mode: every release goes through
	// Redis, still one script call per grant while nobody else waits).
	HandoffLimit int
	// HandoffWindow bounds how long a Mutex stays in this Client by hand-overs and passes,
	// counted from its last grant while free in Redis; the release that ends the chain leaves the
	// lock free. Default DefaultHandoffWindow, or LeaseTime/8 if that is shorter; at most
	// LeaseTime/4.
	HandoffWindow time.Duration
	// HandoffYield is how long the next local waiter first holds back, before its own attempt,
	// after a release that Redis reports other clients subscribed to hear (they are woken by the
	// release message and try at once). Each time the lock is still free after the hold-back
	// (the outside waiter is further away than that), the next one doubles, up to 32 times; a
	// chain's end nobody outside hears starts it over. A hold-back ends early, and does not
	// double the next, once another client has taken the lock and released it (the unlock
	// message after the Client's own). A release that ended a chain (see
	// HandoffWindow) heard by nobody outside holds back only once a second, for three
	// HandoffWindows, for pollers that never subscribe (see outside.go). Default
	// DefaultHandoffYield; negative: no hold-back at all.
	HandoffYield time.Duration
	// StandardConnIO makes the client New builds read and write through Go's standard
	// net.Conn, rather than lockcore's raw connection (Linux; rawconn_linux.go), which spares an
	// idle process a wake-up of the Go runtime's monitor thread per request and per reply. New
	// uses neither when Redis.DialCtxFn or Redis.DialFn is set: the caller dials. For comparisons.
	StandardConnIO bool
}

// maxWindowShare bounds HandoffWindow to LeaseTime/maxWindowShare. Hand-overs never rely on it
// for safety (each one checks the confirmed lease), but a window near the lease would let a
// chain run on a lease that renewals are failing to extend, up to the lease check alone.
const maxWindowShare = 4

func (o *Options) fill() error {
	if o.LeaseTime == 0 {
		o.LeaseTime = DefaultLeaseTime
	}
	if o.LeaseTime < time.Millisecond {
		return fmt.Errorf("lockcore: LeaseTime %v is below 1ms", o.LeaseTime)
	}
	// Redis keeps leases in whole milliseconds; the hold table must record what Redis was sent.
	o.LeaseTime = ceilMs(o.LeaseTime)
	if o.RenewInterval == 0 {
		o.RenewInterval = o.LeaseTime / 3
	}
	if o.RenewInterval <= 0 || o.RenewInterval >= o.LeaseTime {
		return fmt.Errorf("lockcore: RenewInterval %v must be positive and below LeaseTime %v", o.RenewInterval, o.LeaseTime)
	}
	if o.PubSub < PubSubAuto || o.PubSub > PubSubSharded {
		return fmt.Errorf("lockcore: unknown PubSub mode %v", o.PubSub)
	}
	if o.RetryFloor <= 0 {
		o.RetryFloor = DefaultRetryFloor
	}
	if o.HandoffLimit == 0 {
		o.HandoffLimit = DefaultHandoffLimit
	}
	if o.HandoffWindow == 0 {
		o.HandoffWindow = min(DefaultHandoffWindow, o.LeaseTime/maxWindowShare/2)
	}
	if o.HandoffWindow < 0 {
		return fmt.Errorf("lockcore: HandoffWindow %v must not be negative", o.HandoffWindow)
	}
	if o.HandoffWindow > o.LeaseTime/maxWindowShare {
		return fmt.Errorf("lockcore: HandoffWindow %v is over a quarter of LeaseTime %v: a chain of hand-overs that long would outlast the lease it was granted under; shorten the window or lengthen the lease", o.HandoffWindow, o.LeaseTime)
	}
	if o.HandoffYield == 0 {
		o.HandoffYield = DefaultHandoffYield
	}
	if o.knobs.BatchInFlight < -1 || o.knobs.BatchInFlight > 64 {
		return fmt.Errorf("lockcore: BatchInFlight %d must be -1 to 64", o.knobs.BatchInFlight)
	}
	if o.Sync < SyncAuto || o.Sync > SyncOff {
		return fmt.Errorf("lockcore: unknown Sync mode %v", o.Sync)
	}
	if o.SyncTimeout == 0 {
		o.SyncTimeout = DefaultSyncTimeout
	}
	if o.SyncTimeout < 0 {
		return fmt.Errorf("lockcore: SyncTimeout %v must not be negative", o.SyncTimeout)
	}
	o.SyncTimeout = ceilMs(o.SyncTimeout)
	if o.SyncRefresh <= 0 {
		o.SyncRefresh = DefaultSyncRefresh
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxBatch < 2 || o.MaxBatch > maxBatch {
		return fmt.Errorf("lockcore: MaxBatch %d must be 2 to %d", o.MaxBatch, maxBatch)
	}
	return nil
}
