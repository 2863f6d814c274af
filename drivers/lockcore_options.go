package drivers

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/internal/lockhooks"
	"github.com/lockbench/lockbench/lockcore"
)

// lockcoreTuning is the lockcore driver's command-line options, as lockcore.Options takes them.
// The zero value is lockcore's defaults.
type lockcoreTuning struct {
	noQueue       bool
	noBatch       bool              // lockhooks.Knobs.NoBatch
	inFlight      int               // lockhooks.Knobs.BatchInFlight: -1 for inflight=0
	maxBatch      int               // lockcore.Options.MaxBatch
	flushDelay    time.Duration     // rueidis MaxFlushDelay; 0: lockcore's default, negative: none
	handoffLimit  int               // lockcore.Options.HandoffLimit: 0 default, negative strict
	handoffWindow time.Duration     // 0 default
	yield         time.Duration     // 0 default, negative none
	watchdogLease time.Duration     // lockcore.Options.LeaseTime: 0 default
	sync          lockcore.SyncMode // lockcore.Options.Sync: SyncAuto default
	standardIO    bool              // lockcore.Options.StandardConnIO
	nodeTimeout   time.Duration     // lockcore.RedLockOptions.NodeTimeout on masters: 0 default
}

// lockcoreSyncOption is the sync option, which every lockcore driver takes (see syncOption).
var lockcoreSyncOption = Option{"sync", "wait|aof|off: confirm lock, unlock and renewal calls only once the master's replicas acknowledge them, one WAIT (aof: WAITAOF) per pipeline of scripts, as Redisson waits after each script; a shortfall fails the call (default: wait on a master with connected replicas; off: never wait, a fail-over can lose grants)"}

// parseSync reads the sync option's value.
func parseSync(v string) (lockcore.SyncMode, error) {
	switch v {
	case "wait":
		return lockcore.SyncWait, nil
	case "aof":
		return lockcore.SyncAOF, nil
	case "off":
		return lockcore.SyncOff, nil
	case "auto":
		return lockcore.SyncAuto, nil
	}
	return 0, fmt.Errorf("want wait, aof or off")
}

var lockcoreOptions = []Option{
	{"handoff", "hand-overs in a row inside the process before a release goes through Redis (default " +
		strconv.Itoa(lockcore.DefaultHandoffLimit) + "; 0: strict, every release through Redis)"},
	{"handoff_window", "longest a lock stays in the process by hand-overs and passes before a release leaves it free in Redis (default " + lockcore.DefaultHandoffWindow.String() + ", or an eighth of the watchdog lease if shorter; at most a quarter of it)"},
	{"yield", "how long the next local waiter holds back after a release that left the lock free (default " +
		lockcore.DefaultHandoffYield.String() + "; 0: none)"},
	{"queue", "on|off: the local waiter queue; off: every goroutine attempts on its own, as before (default on)"},
	{"watchdog", "lease of locks taken without --lease, renewed by the watchdog every third of it (default " +
		lockcore.DefaultLeaseTime.String() + "; e.g. 1s with --workload longhold --hold 3s); on --topology masters the RedLock's lease, not renewed (default " +
		LockcoreRedLockDefaultLease.String() + ")"},
	{"batch", "on|off (1|0): auto-batching of lock and unlock scripts issued while a call is in flight; off: one script call per operation (default on)"},
	{"flush", "rueidis MaxFlushDelay: how long the pipeline waits to gather more commands into one write; 0: write at once (default " + lockcore.DefaultMaxFlushDelay.String() + ")"},
	{"maxbatch", "most lock and unlock operations in one batch script call, 2 to 128 (default " + strconv.Itoa(lockcore.DefaultMaxBatch) + ")"},
	{"connio", "raw|standard: how the client's connections read and write; raw: system calls that do not wake the Go runtime's monitor thread of an idle process (Linux); standard: Go's net.Conn (default raw; standard where lockbench dials itself, e.g. with --net or a unix:// address)"},
	lockcoreSyncOption,
	{"node_timeout", "on --topology masters (RedLock) only: how long an attempt or a release waits for one master's answer before counting it as failed (default " + lockcore.DefaultRedLockNodeTimeout.String() + "; elsewhere refused)"},
	{"inflight", "when batches leave: 1 to 64, the earlier batching everywhere: an operation goes out at once while fewer than this many script calls of its batch group are in flight, else queues for a batch that leaves when a call returns; 0: batches gather everywhere, leaving when the client has run out of other work (default: they gather, except to a cluster master with replicas in synced mode, where they leave when a call returns, 1 in flight)"},
}

// Options implements Configurable.
func (LockcoreDriver) Options() []Option { return lockcoreOptions }

// Configure implements Configurable.
func (d LockcoreDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	t := d.tune
	for k, v := range opts {
		var err error
		switch k {
		case "handoff":
			var n int
			if n, err = strconv.Atoi(v); err != nil || n < 0 {
				err = fmt.Errorf("want a whole number, 0 or more")
			}
			t.handoffLimit = n
			if n == 0 {
				t.handoffLimit = -1
			}
		case "handoff_window":
			var w time.Duration
			if w, err = time.ParseDuration(v); err != nil {
				err = errWantDuration
			} else if w <= 0 {
				err = fmt.Errorf("must be positive")
			}
			t.handoffWindow = w
		case "yield":
			var y time.Duration
			if y, err = time.ParseDuration(v); err != nil {
				err = errWantDuration
			} else if y < 0 {
				err = fmt.Errorf("must not be negative")
			}
			t.yield = y
			if y == 0 {
				t.yield = -1
			}
		case "watchdog":
			var l time.Duration
			if l, err = time.ParseDuration(v); err != nil {
				err = errWantDuration
			} else if l < 3*time.Millisecond {
				err = fmt.Errorf("want at least 3ms (renewals go out every third of it)")
			}
			t.watchdogLease = l
		case "queue":
			t.noQueue, err = parseOff(v)
		case "batch":
			t.noBatch, err = parseOff(v)
		case "flush":
			var f time.Duration
			if f, err = time.ParseDuration(v); err != nil {
				err = errWantDuration
			} else if f < 0 || f > time.Millisecond {
				err = fmt.Errorf("want 0 to 1ms")
			}
			t.flushDelay = f
			if f == 0 {
				t.flushDelay = -1
			}
		case "connio":
			switch v {
			case "raw":
				t.standardIO = false
			case "standard":
				t.standardIO = true
			default:
				err = fmt.Errorf("want raw or standard")
			}
		case "maxbatch":
			if t.maxBatch, err = strconv.Atoi(v); err != nil || t.maxBatch < 2 || t.maxBatch > 128 {
				err = fmt.Errorf("want a whole number from 2 to 128")
			}
		case "sync":
			t.sync, err = parseSync(v)
		case "node_timeout":
			if t.nodeTimeout, err = time.ParseDuration(v); err != nil {
				err = errWantDuration
			} else if t.nodeTimeout <= 0 {
				err = fmt.Errorf("want a positive duration")
			}
		case "inflight":
			if t.inFlight, err = strconv.Atoi(v); err != nil || t.inFlight < 0 || t.inFlight > 64 {
				err = fmt.Errorf("want a whole number from 0 to 64")
			} else if t.inFlight == 0 {
				t.inFlight = -1 // gather everywhere
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: lockcore option %s=%s: %v", ErrBadOption, k, v, err)
		}
	}
	// lockcore.New would refuse it too, but only once the run connects; say it now, in the
	// option's own terms.
	if lease := t.lease(); t.handoffWindow > lease/4 {
		return nil, fmt.Errorf("%w: lockcore option handoff_window=%v: at most a quarter of the watchdog lease (%v), or a chain of hand-overs could outlast the lease it was granted under; lengthen it with watchdog=", ErrBadOption, t.handoffWindow, lease)
	}
	return LockcoreDriver{spec: spec, given: slices.Sorted(maps.Keys(opts)), tune: t}, nil
}

// errWantDuration replaces time.ParseDuration's message, which quotes Go's syntax at the user.
var errWantDuration = errors.New("want a duration with a unit, e.g. 5ms or 2s")

// parseOff reads an on|off option value and reports whether it is off.
func parseOff(v string) (bool, error) {
	switch v {
	case "on", "1", "true":
		return false, nil
	case "off", "0", "false":
		return true, nil
	}
	return false, fmt.Errorf("want on or off")
}

// lease is the watchdog lease the tuning gives.
func (t lockcoreTuning) lease() time.Duration {
	if t.watchdogLease > 0 {
		return t.watchdogLease
	}
	return lockcore.DefaultLeaseTime
}

// window is the hand-over window the tuning gives, as lockcore.Options fills it in.
func (t lockcoreTuning) window() time.Duration {
	if t.handoffWindow > 0 {
		return t.handoffWindow
	}
	return min(lockcore.DefaultHandoffWindow, t.lease()/8)
}

// apply sets the tuning in opt.
func (t lockcoreTuning) apply(opt *lockcore.Options) {
	lockhooks.SetKnobs(opt, lockhooks.Knobs{NoLocalQueue: t.noQueue, NoBatch: t.noBatch, BatchInFlight: t.inFlight})
	opt.MaxBatch = t.maxBatch
	opt.Redis.MaxFlushDelay = t.flushDelay
	opt.HandoffLimit = t.handoffLimit
	opt.HandoffWindow = t.handoffWindow
	opt.HandoffYield = t.yield
	opt.LeaseTime = t.watchdogLease
	opt.Sync = t.sync
	opt.StandardConnIO = t.standardIO
}

// describeSync records in driver settings what the Client c waits for: the option given (or
// auto) and, resolved, whether and for how many replicas (those of the master of slot 0 on a
// cluster; every master is waited for with its own count).
func describeSync(s map[string]string, c *lockcore.Client, opt lockcore.SyncMode) {
	mode, n := c.Sync("")
	switch {
	case mode == lockcore.SyncOff:
		s["sync"] = "off: no WAIT; a fail-over can lose grants the replicas had not received"
		return
	case n == 0 && mode == lockcore.SyncWait:
		s["sync"] = opt.String() + ": no replica connected at start, nothing waited for (counts refreshed every " + lockcore.DefaultSyncRefresh.String() + ")"
		return
	}
	cmd := "WAIT " + strconv.Itoa(n)
	if mode == lockcore.SyncAOF {
		cmd = "WAITAOF <1 if the master has AOF> " + strconv.Itoa(n)
	}
	s["sync"] = opt.String() + ": " + cmd + " " + strconv.FormatInt(lockcore.DefaultSyncTimeout.Milliseconds(), 10) +
		" after each pipeline of lock, unlock and renewal scripts (one per batch); fewer replicas: the grant is undone and the call fails (lockcore.ErrNotSynced)"
}

// flushDelayString is the rueidis MaxFlushDelay the tuning gives, for driver settings.
func (t lockcoreTuning) flushDelayString() string {
	switch {
	case t.flushDelay < 0:
		return "0s"
	case t.flushDelay == 0:
		return lockcore.DefaultMaxFlushDelay.String()
	}
	return t.flushDelay.String()
}

// describe records the tuning in driver settings.
func (t lockcoreTuning) describe(s map[string]string) {
	if t.standardIO {
		s["conn_io"] = "standard: Go's net.Conn"
	} else {
		s["conn_io"] = "raw system calls on the sockets lockcore dials (Linux), Go's net.Conn where lockbench dials (--net, unix://) or elsewhere"
	}
	if t.noBatch {
		s["batch"] = "off: one script call per lock and unlock"
	} else {
		s["batch"] = "on: lock and unlock scripts issued together go out as one script call (on a cluster per master, or per hash slot where the server refuses scripts across slots)"
		switch t.inFlight {
		case 0:
			s["batch_send"] = "gather: a batch leaves when the client has run out of other work (one yield), whatever is in flight; to a cluster master with replicas in synced mode, when a call returns, with at most 1 in flight"
		case -1:
			s["batch_send"] = "gather everywhere: a batch leaves when the client has run out of other work (one yield), whatever is in flight"
		default:
			s["batch_send"] = "when a call returns, with at most " + strconv.Itoa(t.inFlight) + " in flight"
		}
		m := t.maxBatch
		if m == 0 {
			m = lockcore.DefaultMaxBatch
		}
		s["batch_max"] = strconv.Itoa(m) + " operations per script call"
	}
	if t.noQueue {
		s["local_queue"] = "off: every goroutine attempts in Redis on its own"
		return
	}
	s["local_queue"] = "on: one attempt in flight per lock, FIFO local waiters"
	limit, window, yield := t.handoffLimit, t.window(), t.yield
	if limit == 0 {
		limit = lockcore.DefaultHandoffLimit
	}
	if yield == 0 {
		yield = lockcore.DefaultHandoffYield
	}
	if limit < 0 {
		s["handoff"] = fmt.Sprintf("0 (strict: every release through Redis; a release with a local waiter grants it in the same script when nobody else listens, for up to %v since the lock was last free)", window)
	} else {
		s["handoff"] = fmt.Sprintf("up to %d in a row inside the process, within %v since the lock was last free in Redis, each only while the confirmed lease is safely ahead", limit, window)
	}
	s["handoff_chain_end"] = "the release that ends a chain leaves the lock free in Redis"
	if yield < 0 {
		s["handoff_yield"] = "none"
	} else {
		s["handoff_yield"] = yield.String() + " after a release that left the lock free (a chain's end, or other clients heard it)"
	}
}
