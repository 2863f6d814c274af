package lockcore

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/netem"
	"github.com/redis/rueidis"
)

// TestChaos is the randomized fault test of lockcore: several Clients on one redis-server, each
// behind its own netem.Net, run workers that take every lock kind on a few shared names, while a
// seeded schedule partitions a client's link or loses or delays its replies. A checker that does
// not trust the lock watches five invariants (see chaosChecker):
//
//  1. exclusion: no two holders of a name inside at once, across kinds and clients, counting a
//     holder only inside the window its lease guarantees;
//  2. fencing: a FencedMutex holder that enters has a token above every earlier one that entered;
//  3. cleanup: once everything is healed and unlocked and the longest lease has run out, Redis
//     keeps no lock hash, fair queue or timeout key, and no Client keeps a hold or a local queue;
//  4. liveness: every Lock and TryLock returns within its deadline plus chaosCallBound;
//  5. leases: no Client's hold table believes a lease runs longer than Redis's PTTL says.
//
// It runs -chaos.duration (default 60 s when CI is true or 1, else 20 s) from -chaos.seed
// (default: a random seed, printed); a failure prints the replay command line and the fault
// schedule. Choices (client options, fault schedule, every worker's sequence of operations) are
// drawn from the seed; timing is not, so a replay reproduces the load, not the interleaving.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: seconds of load under faults")
	}
	cfg := newChaosConfig()
	r := newChaosRun(t, cfg)
	r.run()
}

var (
	chaosDurationFlag = flag.Duration("chaos.duration", 0, "how long TestChaos runs (0: 60s when CI is true or 1, else 20s)")
	chaosSeedFlag     = flag.Uint64("chaos.seed", 0, "TestChaos seed (0: a random one, printed)")
)

const (
	// chaosWriteTimeout is every chaos Client's rueidis ConnWriteTimeout and dial timeout: a call
	// into a partition fails after about this long rather than waiting for the heal.
	chaosWriteTimeout = 400 * time.Millisecond
	// chaosPingGap is rueidis' Dialer.KeepAlive, the idle gap after which a pipelined connection
	// pings; a ping unanswered within chaosWriteTimeout closes the connection. A call waiting on a
	// silent pipelined connection fails within 2 gaps and a timeout.
	chaosPingGap = 50 * time.Millisecond
	// chaosCallBound is how long past its deadline (its context's, or TryLock's wait) a lock call
	// may return (invariant 4). A call at its deadline may have one script in flight that must
	// finish (a sent attempt runs to its reply, so a grant is never lost) and one more call to
	// clean up (FairMutex leaves its queue); each fails within a ping gap twice and a write
	// timeout on a silent link. The rest is scheduling slack under -race on a shared machine.
	chaosCallBound = 2*(chaosWriteTimeout+2*chaosPingGap) + 250*time.Millisecond
	// chaosMaxLease is the longest lease a chaos Client or worker asks for.
	chaosMaxLease = 2 * time.Second
	// chaosLeaseSlack is how much longer than Redis's PTTL a hold table's lease may be believed
	// (invariant 5): PTTL's millisecond truncation and the check's own timing.
	chaosLeaseSlack = 5 * time.Millisecond
	// chaosLeaseCheckEvery is how often the hold tables are compared with Redis.
	chaosLeaseCheckEvery = 100 * time.Millisecond
	// chaosGoneGrace is how long a hold table may keep a hold whose field is gone from Redis
	// (invariant 5): a release deletes the key before its reply comes back, and on a machine
	// shared under -race a goroutine can wait that long to run.
	chaosGoneGrace = 300 * time.Millisecond
	// chaosStuckAfter is how long past the end of the run the workers may take to stop before
	// the test dumps goroutines and fails: a worker's last call is bounded by its deadline (1 s)
	// plus chaosCallBound, its release by its context.
	chaosStuckAfter = 15 * time.Second
)

// Lock names: every kind meets every other on the same few names. The Mutex kinds (Mutex,
// FencedMutex, FairMutex) share one hash layout; lockcore's read-write scripts refuse a hash
// without a "mode" field (Redisson's would join it), and the Mutex kinds find an RWMutex's hash
// held, so all of them exclude each other. (One owner taking one name through two kinds at once
// is not excluded, by the protocol's fields; no worker does that.)
var (
	chaosMutexNames = []string{"chaos:a", "chaos:b", "chaos:c"}
	chaosRWNames    = chaosMutexNames
)

// chaosConfig is a run's size and seed.
type chaosConfig struct {
	seed     uint64
	duration time.Duration
	// replicated runs on a master with one replica that pauses now and then, the Clients in
	// synced mode (see chaos_synced_test.go).
	replicated bool
}

func newChaosConfig() chaosConfig {
	cfg := chaosConfig{seed: *chaosSeedFlag, duration: *chaosDurationFlag}
	if cfg.seed == 0 {
		cfg.seed = rand.Uint64()>>1 | 1
	}
	if cfg.duration <= 0 {
		cfg.duration = 20 * time.Second
		if ci, err := strconv.ParseBool(os.Getenv("CI")); err == nil && ci {
			cfg.duration = 60 * time.Second
		}
	}
	return cfg
}

// chaosRNG returns the random stream number stream of seed: every consumer of randomness has
// its own, so that one drawing more does not shift another's choices.
func chaosRNG(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// Lock kinds a worker picks from.
type chaosKind uint8

const (
	kindMutex          chaosKind = iota // Mutex.Lock or LockLease
	kindMutexTry                        // Mutex.TryLock with a wait (0: one attempt)
	kindMutexReentrant                  // Mutex.Lock twice, Unlock twice
	kindFenced                          // FencedMutex.Lock or TryLock
	kindFair                            // FairMutex.Lock or TryLock
	kindRWWrite                         // RWMutex.Lock or TryLock
	kindRWRead                          // RWMutex.RLock or TryRLock
	numChaosKinds
)

var chaosKindNames = [numChaosKinds]string{"mutex", "mutex-try", "mutex-reentrant", "fenced", "fair", "rw-write", "rw-read"}

func (k chaosKind) String() string { return chaosKindNames[k] }

// chaosKindWeights favours the Mutex kinds, where the local hand-over is.
var chaosKindWeights = [numChaosKinds]int{4, 3, 2, 2, 2, 1, 1}

// Fault kinds.
type chaosFaultKind uint8

const (
	faultPartition chaosFaultKind = iota // both directions silent until Heal
	faultDrop                            // replies discarded until Heal; connections severed then
	faultStall                           // replies held until Heal
)

var chaosFaultNames = []string{"partition", "drop-replies", "stall-replies"}

func (k chaosFaultKind) String() string { return chaosFaultNames[k] }

// chaosFault is one fault of the schedule, planned from the seed; applied and healed are when it
// was, as offsets from the start of the run (0 until then).
type chaosFault struct {
	client          int
	kind            chaosFaultKind
	at, dur         time.Duration
	applied, healed time.Duration
	err             error
}

func (f *chaosFault) String() string {
	s := fmt.Sprintf("+%-8v c%d %-13v for %v", f.at.Round(time.Millisecond), f.client, f.kind, f.dur.Round(time.Millisecond))
	if f.applied > 0 {
		s += fmt.Sprintf(" (applied +%v, healed +%v)", f.applied.Round(time.Millisecond), f.healed.Round(time.Millisecond))
	}
	if f.err != nil {
		s += fmt.Sprintf(" error: %v", f.err)
	}
	return s
}

// chaosClient is one Client of the run with its link.
type chaosClient struct {
	i       int
	c       *Client
	net     *netem.Net
	opt     Options
	workers int
	faults  []*chaosFault
	// faulted is 1 while a fault is on; epoch counts faults begun, so that a check that spans
	// the start of one can tell.
	faulted  atomic.Int32
	epoch    atomic.Uint64
	lastHeal atomic.Int64 // offset from the start of the run
}

func (cc *chaosClient) String() string {
	o := cc.opt
	limit := strconv.Itoa(o.HandoffLimit)
	if o.HandoffLimit == 0 {
		limit = "default"
	}
	window := "default"
	if o.HandoffWindow > 0 {
		window = o.HandoffWindow.String()
	}
	return fmt.Sprintf("c%d: %d workers, LeaseTime %v, HandoffLimit %s, HandoffWindow %s, NoBatch %v",
		cc.i, cc.workers, o.LeaseTime, limit, window, o.knobs.NoBatch)
}

// chaosRun is one run of the test.
type chaosRun struct {
	t       *testing.T
	cfg     chaosConfig
	addr    string
	direct  rueidis.Client // straight to the server, for the checks
	clients []*chaosClient
	faults  []*chaosFault // every client's, by planned time
	// faultMu guards what the faults record while they run (applied, healed, err).
	faultMu sync.Mutex
	// workers maps each worker's Owner field to its name, c<client>.w<worker>.
	workers sync.Map
	// history has each worker's last lock calls, by worker name, and lastOn its last call on
	// each lock ("<worker> <lock>"), for reports on what it left behind.
	histMu  sync.Mutex
	history map[string][]string
	lastOn  map[string]string
	chk     *chaosChecker
	pair    *replicaPair // with cfg.replicated: the master and its replica
	t0      time.Time
	end     time.Time
}

func newChaosRun(t *testing.T, cfg chaosConfig) *chaosRun {
	r := &chaosRun{t: t, cfg: cfg, history: make(map[string][]string), lastOn: make(map[string]string)}
	if cfg.replicated {
		r.pair = startReplicaPair(t)
		r.addr = r.pair.master.Addr()
	} else {
		r.addr = redistest.NewServer(t).Addr()
	}
	direct, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{r.addr}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatalf("direct client: %v", err)
	}
	t.Cleanup(direct.Close)
	r.direct = direct

	rng := chaosRNG(cfg.seed, 0)
	n := 3 + rng.IntN(2)
	for i := range n {
		cc := &chaosClient{i: i, workers: 4 + rng.IntN(5), net: netem.New(netem.Conditions{})}
		t.Cleanup(func() { cc.net.Close() })
		cc.opt.LeaseTime = time.Duration(600+rng.IntN(1401)) * time.Millisecond
		switch rng.IntN(4) {
		case 0: // default
		case 1:
			cc.opt.HandoffLimit = 1 + rng.IntN(4)
		case 2:
			cc.opt.HandoffLimit = -1
		case 3:
			// Long chains: the longest window New allows and no count limit, so that only
			// the lease check (leaseSafe) stands between a chain and a lease that ran out
			// under it (a grant whose reply came late, renewals lost in a partition).
			cc.opt.HandoffLimit = 1 << 20
			cc.opt.HandoffWindow = cc.opt.LeaseTime / 4
		}
		if cc.opt.HandoffWindow == 0 && rng.IntN(2) == 0 {
			cc.opt.HandoffWindow = time.Duration(1+rng.IntN(50)) * time.Millisecond
		}
		cc.opt.knobs.NoBatch = rng.IntN(3) == 0
		if cfg.replicated {
			cc.opt.SyncTimeout = chaosSyncTimeout
		}
		opt := cc.opt
		nt := cc.net
		opt.Redis = rueidis.ClientOption{
			InitAddress:       []string{r.addr},
			ForceSingleClient: true,
			ConnWriteTimeout:  chaosWriteTimeout,
			Dialer:            net.Dialer{Timeout: chaosWriteTimeout, KeepAlive: chaosPingGap},
			DialCtxFn: func(ctx context.Context, addr string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
				return nt.Dial(ctx, "tcp", addr)
			},
		}
		c, err := New(opt)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		t.Cleanup(c.Close)
		cc.c = c
		r.clients = append(r.clients, cc)
	}
	r.planFaults()
	r.chk = newChaosChecker(r)
	return r
}

// planFaults draws every client's fault schedule: quiet gaps of 0.5–4 s between faults, so
// that a client is healthy most of the time and its locks are contended in between.
func (r *chaosRun) planFaults() {
	last := r.cfg.duration - 500*time.Millisecond
	for _, cc := range r.clients {
		rng := chaosRNG(r.cfg.seed, 1000+uint64(cc.i))
		at := time.Duration(200+rng.IntN(2000)) * time.Millisecond
		for at < last {
			f := &chaosFault{client: cc.i, at: at, kind: chaosFaultKind(rng.IntN(len(chaosFaultNames)))}
			switch f.kind {
			case faultPartition:
				f.dur = time.Duration(100+rng.IntN(1401)) * time.Millisecond
			case faultDrop:
				f.dur = time.Duration(50+rng.IntN(451)) * time.Millisecond
			case faultStall:
				f.dur = time.Duration(50+rng.IntN(1451)) * time.Millisecond
			}
			f.dur = min(f.dur, last-at)
			cc.faults = append(cc.faults, f)
			r.faults = append(r.faults, f)
			at += f.dur + time.Duration(500+rng.IntN(3501))*time.Millisecond
		}
	}
	slices.SortFunc(r.faults, func(a, b *chaosFault) int { return int(a.at - b.at) })
}

func (r *chaosRun) since() time.Duration { return time.Since(r.t0) }

func (r *chaosRun) run() {
	t := r.t
	t.Logf("chaos: seed %d, %v, %d clients on %s, call bound %v",
		r.cfg.seed, r.cfg.duration, len(r.clients), r.addr, r.callBound())
	for _, cc := range r.clients {
		t.Logf("  %v, %d faults planned", cc, len(cc.faults))
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay: go test ./lockcore -run TestChaos -chaos.seed=%d -chaos.duration=%v", r.cfg.seed, r.cfg.duration)
			var b strings.Builder
			r.faultMu.Lock()
			for _, f := range r.faults {
				fmt.Fprintf(&b, "\n  %v", f)
			}
			r.faultMu.Unlock()
			t.Logf("fault schedule:%s", b.String())
		}
	})

	r.t0 = time.Now()
	r.end = r.t0.Add(r.cfg.duration)
	var faultsDone, workersDone sync.WaitGroup
	for _, cc := range r.clients {
		faultsDone.Go(func() { r.injectFaults(cc) })
	}
	if r.pair != nil {
		faultsDone.Go(r.pauseReplica)
	}
	for _, cc := range r.clients {
		for w := range cc.workers {
			workersDone.Go(func() { r.work(cc, w) })
		}
	}
	for _, extra := range chaosExtras {
		workersDone.Go(func() { extra(r) })
	}
	leaseCheckStop := make(chan struct{})
	var leaseCheckDone sync.WaitGroup
	leaseCheckDone.Go(func() { r.checkLeases(leaseCheckStop) })

	faultsDone.Wait() // each fault heals after itself; this heals whatever a failed heal left
	for _, cc := range r.clients {
		if err := cc.net.Heal(r.addr); err != nil {
			t.Errorf("c%d: final heal: %v", cc.i, err)
		}
	}
	if !waitTimeout(&workersDone, time.Until(r.end)+chaosStuckAfter) {
		var b strings.Builder
		pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Errorf("workers still running %v after the end of the run; goroutines:\n%s", chaosStuckAfter, b.String())
		for _, cc := range r.clients {
			cc.c.Close() // ends every wait with ErrClosed
		}
		if !waitTimeout(&workersDone, 10*time.Second) {
			t.Fatal("workers still running 10s after Close")
		}
	}
	close(leaseCheckStop)
	leaseCheckDone.Wait()

	// Every worker has unlocked what it held. A lock whose release failed, or that was granted
	// by a script whose reply was lost, expires with its lease; nothing renews it any more.
	time.Sleep(chaosMaxLease + time.Second)
	r.checkLeftovers()
	for _, cc := range r.clients {
		cc.c.Close()
		if err := cc.net.Close(); err != nil {
			t.Errorf("c%d: netem close: %v", cc.i, err)
		}
	}
	r.chk.report()
}

// chaosExtras are loads of the run beside the workers, each registered by its own file's init so
// that they stay apart: started with the workers, each returns by the end of the run.
var chaosExtras []func(r *chaosRun)

// waitTimeout waits for wg up to d and reports whether it finished.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// injectFaults applies cc's schedule, healing each fault after its duration and everything at
// the end.
func (r *chaosRun) injectFaults(cc *chaosClient) {
	for _, f := range cc.faults {
		if !sleepUntil(r.t0.Add(f.at), r.end) {
			break
		}
		cc.epoch.Add(1)
		cc.faulted.Store(1)
		applied := r.since()
		err := r.apply(cc, f.kind)
		sleepUntil(r.t0.Add(f.at+f.dur), r.end.Add(time.Second))
		err = errors.Join(err, r.heal(cc, f.kind))
		healed := r.since()
		cc.lastHeal.Store(int64(healed))
		cc.faulted.Store(0)
		r.faultMu.Lock()
		f.applied, f.healed, f.err = applied, healed, err
		r.faultMu.Unlock()
	}
}

// sleepUntil sleeps until at, or until limit if that comes first; it reports whether it reached at.
func sleepUntil(at, limit time.Time) bool {
	if at.After(limit) {
		time.Sleep(time.Until(limit))
		return false
	}
	time.Sleep(time.Until(at))
	return true
}

func (r *chaosRun) apply(cc *chaosClient, k chaosFaultKind) error {
	switch k {
	case faultDrop:
		return cc.net.DropReplies(r.addr)
	case faultStall:
		return cc.net.StallReplies(r.addr)
	}
	return cc.net.Partition(r.addr)
}

// heal ends fault k. A connection that lost replies is out of step: rueidis would match the next
// reply that passes to the oldest call waiting, another caller's, and the test would see a lock
// fault that is the network's. So the connections open during a drop are severed before replies
// flow again, and once more after, for one that escaped the first Sever (see netem's Sever);
// that one can only have sent its handshake, whose lost reply fails it.
func (r *chaosRun) heal(cc *chaosClient, k chaosFaultKind) error {
	if k != faultDrop {
		return cc.net.Heal(r.addr)
	}
	return errors.Join(cc.net.Sever(r.addr), cc.net.Heal(r.addr), cc.net.Sever(r.addr))
}

// chaosOp is one acquisition by a worker, from its choice to its release. Offsets are from the
// start of the run.
type chaosOp struct {
	client, worker int
	owner          string // the Owner's field
	kind           chaosKind
	name           string
	lease          time.Duration // asked for; 0: the Client's LeaseTime, renewed by the watchdog
	leaseL         time.Duration // the lease the grant runs on: lease, or the Client's LeaseTime
	wait           time.Duration // TryLock's wait; negative: Lock
	timeout        time.Duration // the call's context
	hold           time.Duration
	// start is just before the call, ret just after; winEnd = start + leaseL/2 ends the window
	// in which the grant is guaranteed exclusive; enter is when the holder entered the
	// occupancy table (0: it did not).
	start, ret, winEnd, enter time.Duration
	token                     int64
}

func (o *chaosOp) exclusive() bool { return o.kind != kindRWRead }

func (o *chaosOp) String() string {
	lease := "watchdog " + o.leaseL.String()
	if o.lease > 0 {
		lease = "lease " + o.lease.String()
	}
	call := "Lock"
	if o.wait >= 0 {
		call = "TryLock(wait " + o.wait.String() + ")"
	}
	s := fmt.Sprintf("c%d.w%d (owner %s) %v %s %s, ctx %v: start +%v returned +%v entered +%v window end +%v",
		o.client, o.worker, o.owner, o.kind, call, lease, o.timeout,
		o.start.Round(time.Microsecond), o.ret.Round(time.Microsecond), o.enter.Round(time.Microsecond), o.winEnd.Round(time.Microsecond))
	if o.token != 0 {
		s += fmt.Sprintf(" token %d", o.token)
	}
	return s
}

// pick draws the worker's next operation.
func (r *chaosRun) pick(rng *rand.Rand, cc *chaosClient, w int, owner Owner) *chaosOp {
	op := &chaosOp{client: cc.i, worker: w, owner: owner.Field(), wait: -1}
	total := 0
	for _, wt := range chaosKindWeights {
		total += wt
	}
	n := rng.IntN(total)
	for k, wt := range chaosKindWeights {
		if n < wt {
			op.kind = chaosKind(k)
			break
		}
		n -= wt
	}
	if op.kind == kindRWWrite || op.kind == kindRWRead {
		op.name = chaosRWNames[rng.IntN(len(chaosRWNames))]
	} else {
		op.name = chaosMutexNames[rng.IntN(len(chaosMutexNames))]
	}
	if rng.IntN(2) == 0 {
		op.lease = time.Duration(300+rng.IntN(1701)) * time.Millisecond
	}
	op.leaseL = op.lease
	if op.lease == 0 {
		op.leaseL = cc.opt.LeaseTime
	}
	switch op.kind {
	case kindMutexTry:
		op.wait = 0
		if rng.IntN(4) != 0 {
			op.wait = time.Duration(20+rng.IntN(781)) * time.Millisecond
		}
	case kindFenced, kindFair, kindRWWrite, kindRWRead:
		if rng.IntN(2) == 0 {
			op.wait = time.Duration(rng.IntN(801)) * time.Millisecond
		}
	}
	op.timeout = time.Duration(200+rng.IntN(801)) * time.Millisecond
	op.hold = time.Duration(rng.IntN(15001)) * time.Microsecond
	if rng.IntN(8) == 0 {
		// A long hold, up to 40% of the lease (the window ends at half of it): a holder still
		// inside when a lease it was wrongly handed runs out is what makes two holders, and
		// short holds leave before any lease could.
		op.hold = time.Duration(rng.Int64N(int64(op.leaseL) * 2 / 5))
	}
	return op
}

// work is one worker: one Owner that takes and releases locks until the end of the run.
func (r *chaosRun) work(cc *chaosClient, w int) {
	c := cc.c
	owner := c.NewOwner()
	r.workers.Store(owner.Field(), fmt.Sprintf("c%d.w%d", cc.i, w))
	rng := chaosRNG(r.cfg.seed, 2000+uint64(cc.i)*100+uint64(w))
	for time.Now().Before(r.end) {
		r.do(c, owner, r.pick(rng, cc, w, owner))
	}
}

// do runs one operation: acquire under a deadline, enter the occupancy table if the grant came
// inside its window, hold, leave, release.
func (r *chaosRun) do(c *Client, owner Owner, op *chaosOp) {
	var acquire func(ctx context.Context) (bool, int64, error)
	var release func(ctx context.Context) error
	switch op.kind {
	case kindMutex, kindMutexTry, kindMutexReentrant:
		m := c.Mutex(op.name)
		acquire = func(ctx context.Context) (bool, int64, error) {
			if op.wait >= 0 {
				ok, err := m.TryLock(ctx, owner, op.wait, op.lease)
				return ok, 0, err
			}
			if op.lease > 0 {
				return true, 0, m.LockLease(ctx, owner, op.lease)
			}
			return true, 0, m.Lock(ctx, owner)
		}
		release = func(ctx context.Context) error { return m.Unlock(ctx, owner) }
	case kindFenced:
		f := c.FencedMutex(op.name)
		acquire = func(ctx context.Context) (bool, int64, error) {
			if op.wait >= 0 {
				tok, ok, err := f.TryLock(ctx, owner, op.wait, op.lease)
				return ok, tok, err
			}
			if op.lease > 0 {
				tok, err := f.LockLease(ctx, owner, op.lease)
				return true, tok, err
			}
			tok, err := f.Lock(ctx, owner)
			return true, tok, err
		}
		release = func(ctx context.Context) error { return f.Unlock(ctx, owner) }
	case kindFair:
		f := c.FairMutex(op.name, FairMutexOptions{})
		acquire = func(ctx context.Context) (bool, int64, error) {
			if op.wait >= 0 {
				ok, err := f.TryLock(ctx, owner, op.wait, op.lease)
				return ok, 0, err
			}
			if op.lease > 0 {
				return true, 0, f.LockLease(ctx, owner, op.lease)
			}
			return true, 0, f.Lock(ctx, owner)
		}
		release = func(ctx context.Context) error { return f.Unlock(ctx, owner) }
	case kindRWWrite:
		rw := c.RWMutex(op.name)
		acquire = func(ctx context.Context) (bool, int64, error) {
			if op.wait >= 0 {
				ok, err := rw.TryLock(ctx, owner, op.wait, op.lease)
				return ok, 0, err
			}
			if op.lease > 0 {
				return true, 0, rw.LockLease(ctx, owner, op.lease)
			}
			return true, 0, rw.Lock(ctx, owner)
		}
		release = func(ctx context.Context) error { return rw.Unlock(ctx, owner) }
	case kindRWRead:
		rw := c.RWMutex(op.name)
		acquire = func(ctx context.Context) (bool, int64, error) {
			if op.wait >= 0 {
				ok, err := rw.TryRLock(ctx, owner, op.wait, op.lease)
				return ok, 0, err
			}
			if op.lease > 0 {
				return true, 0, rw.RLockLease(ctx, owner, op.lease)
			}
			return true, 0, rw.RLock(ctx, owner)
		}
		release = func(ctx context.Context) error { return rw.RUnlock(ctx, owner) }
	}

	ok, token, err := r.call(op, acquire, true)
	if err != nil || !ok {
		return
	}
	op.token = token
	holds := 1
	entered := r.chk.enter(op)
	if op.kind == kindMutexReentrant {
		// The second hold, under its own deadline; it counts for invariant 4 but not as a grant.
		again := *op
		if ok, _, err := r.call(&again, acquire, false); ok && err == nil {
			holds++
		}
	}
	if entered {
		if d := min(op.hold, op.winEnd-r.since()-time.Millisecond); d > 0 {
			time.Sleep(d)
		}
		r.chk.leave(op)
	}
	for range holds {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		err := release(ctx)
		cancel()
		r.chk.released(op, time.Since(start), err)
	}
}

// call runs one acquisition under the op's deadline and records its outcome; first says whether
// it is the op's grant (not a reentrant second hold).
func (r *chaosRun) call(op *chaosOp, acquire func(context.Context) (bool, int64, error), first bool) (bool, int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), op.timeout)
	defer cancel()
	begin := time.Now()
	op.start = begin.Sub(r.t0)
	op.winEnd = op.start + op.leaseL/2
	ok, token, err := acquire(ctx)
	done := time.Now()
	op.ret = done.Sub(r.t0)
	deadline, _ := ctx.Deadline()
	if op.wait >= 0 {
		if w := begin.Add(op.wait); w.Before(deadline) {
			deadline = w
		}
	}
	r.chk.returned(op, done.Sub(deadline), ok && err == nil, err, first)
	outcome := "granted"
	switch {
	case err != nil:
		outcome = "error: " + err.Error()
	case !ok:
		outcome = "not granted"
	}
	w := fmt.Sprintf("c%d.w%d", op.client, op.worker)
	line := fmt.Sprintf("%v %s start +%v returned +%v: %s", op.kind, op.name,
		op.start.Round(time.Millisecond), op.ret.Round(time.Millisecond), outcome)
	r.histMu.Lock()
	h := append(r.history[w], line)
	r.history[w] = h[max(len(h)-chaosHistory, 0):]
	r.lastOn[w+" "+op.name] = line
	r.histMu.Unlock()
	return ok, token, err
}

// chaosHistory is how many lock calls per worker a report of leftovers shows.
const chaosHistory = 4

// checkLeases compares every healthy client's hold table with Redis (invariant 5) until stop.
//
// Each check reads the table, then Redis, then the table again, and compares only the holds
// whose confirmed lease did not move meanwhile: an owner that released and took the lock again
// in between (same field, a new lease) is not the hold Redis was asked about.
func (r *chaosRun) checkLeases(stop chan struct{}) {
	tick := time.NewTicker(chaosLeaseCheckEvery)
	defer tick.Stop()
	// gone has the holds seen missing from Redis: when first, and the table's belief then. It
	// tells a release in flight (the key goes before the reply comes back) from a hold the table
	// keeps after it is gone.
	gone := make(map[string]chaosBelief)
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		missing := make(map[string]chaosBelief)
		for _, cc := range r.clients {
			if cc.faulted.Load() != 0 {
				continue
			}
			epoch := cc.epoch.Load()
			// Calls sent during the last fault may still be settling: no grace rule for them.
			settled := r.since()-time.Duration(cc.lastHeal.Load()) > chaosCallBound
			first := r.readTable(cc.c)
			type reply struct {
				exists bool
				pttl   time.Duration
				at     time.Time // when the reply was back
			}
			replies := make(map[string]reply, len(first))
			for key, b := range first {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				res, err := chaosLeaseScript.Exec(ctx, r.direct, []string{b.name}, []string{b.field}).AsIntSlice()
				cancel()
				if err == nil && len(res) == 2 {
					replies[key] = reply{res[0] == 1, time.Duration(res[1]) * time.Millisecond, time.Now()}
				}
			}
			second := r.readTable(cc.c)
			if cc.faulted.Load() != 0 || cc.epoch.Load() != epoch {
				continue
			}
			for key, b := range first {
				rep, ok := replies[key]
				if !ok || !b.same(second[key]) {
					continue
				}
				r.chk.leaseChecks.Add(1)
				// b.left was read at b.from or later, Redis's PTTL at rep.at or earlier: the
				// table believes its lease ends at b.from+b.left or later, and Redis's ends
				// at rep.at+PTTL (+1ms of truncation) or earlier. Past the slack, the table
				// trusts a lease Redis does not give.
				elapsed := rep.at.Sub(b.from)
				switch {
				case rep.exists && rep.pttl >= 0 && b.left > rep.pttl+elapsed+chaosLeaseSlack:
					r.chk.violate(5, fmt.Sprintf("at +%v c%d's hold table believes the lease of %s field %s runs %v more, Redis PTTL %v (check took %v); Redis now %s; table now %s",
						b.from.Sub(r.t0).Round(time.Microsecond), cc.i, b.name, b.field, b.left, rep.pttl, elapsed,
						r.describeKey(b.name), chaosTable(cc.c, b.name)),
						b.from.Sub(r.t0), r.since())
				case !rep.exists && b.left > elapsed+chaosLeaseSlack && settled:
					seen, ok := gone[key]
					if !ok || !seen.same(b) {
						seen = b
					}
					missing[key] = seen
					if b.from.Sub(seen.from) >= chaosGoneGrace {
						r.chk.violate(5, fmt.Sprintf("at +%v c%d's hold table believes the lease of %s field %s runs %v more; the field has been gone from Redis since +%v at least; Redis now %s; table now %s",
							b.from.Sub(r.t0).Round(time.Microsecond), cc.i, b.name, b.field, b.left, seen.from.Sub(r.t0).Round(time.Millisecond),
							r.describeKey(b.name), chaosTable(cc.c, b.name)),
							seen.from.Sub(r.t0), r.since())
						delete(missing, key) // reported once
					}
				}
			}
		}
		gone = missing
	}
}

// chaosBelief is one hold's lease as a hold table reported it: left, computed at some time
// between from and to.
type chaosBelief struct {
	name, field string
	left        time.Duration
	from, to    time.Time
}

// same reports whether a and b can be the same confirmed lease: the ends they put it at
// overlap (within a millisecond). A hold released and taken again has a new one.
func (a chaosBelief) same(b chaosBelief) bool {
	if b.from.IsZero() {
		return false
	}
	const slack = time.Millisecond
	return !a.from.Add(a.left).After(b.to.Add(b.left+slack)) && !b.from.Add(b.left).After(a.to.Add(a.left+slack))
}

// readTable returns what c's hold table believes of its leases, by "<name> <field>".
func (r *chaosRun) readTable(c *Client) map[string]chaosBelief {
	from := time.Now()
	leases := tableLeases(c)
	to := time.Now()
	out := make(map[string]chaosBelief, len(leases))
	for _, l := range leases {
		out[l.Name+" "+l.Field] = chaosBelief{name: l.Name, field: l.Field, left: l.Left, from: from, to: to}
	}
	return out
}

// chaosLeaseScript reads a hold's presence and its lock's PTTL in one step.
var chaosLeaseScript = rueidis.NewLuaScript(`return {redis.call('hexists', KEYS[1], ARGV[1]), redis.call('pttl', KEYS[1])}`)

// checkLeftovers is invariant 3: after every worker released and the longest lease ran out,
// nothing is held, in Redis or in any Client.
func (r *chaosRun) checkLeftovers() {
	r.awaitFairDeadlines()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	keys, err := r.direct.Do(ctx, r.direct.B().Keys().Pattern("*").Build()).AsStrSlice()
	if err != nil {
		r.t.Errorf("KEYS: %v", err)
		return
	}
	slices.Sort(keys)
	now := r.since()
	for _, k := range keys {
		if strings.HasPrefix(k, "redisson_lock_token:") {
			continue // fencing counters are kept on purpose
		}
		if r.staleFairQueue(ctx, k) {
			// A fair waiter that gave up during a fault can be queued again by its own
			// attempt arriving after its leave (a command held by the network, run late): no
			// client can stop that. Such entries are past their deadline (the next fair call
			// drops them) and the keys carry a TTL past it, so they go by themselves. A lock
			// hash, or a queue entry still due, is a leftover.
			continue
		}
		typ, _ := r.direct.Do(ctx, r.direct.B().Type().Key(k).Build()).ToString()
		pttl, _ := r.direct.Do(ctx, r.direct.B().Pttl().Key(k).Build()).AsInt64()
		desc := fmt.Sprintf("key %s (%s, PTTL %dms) left in Redis %v after the last release", k, typ, pttl, chaosMaxLease+time.Second)
		switch typ {
		case "hash":
			fields, _ := r.direct.Do(ctx, r.direct.B().Hgetall().Key(k).Build()).AsStrMap()
			desc += fmt.Sprintf(": %v%s%s", fields, r.holdersOf(fields), r.historyOf(fields, k))
		case "list":
			items, _ := r.direct.Do(ctx, r.direct.B().Lrange().Key(k).Start(0).Stop(-1).Build()).AsStrSlice()
			fields := make(map[string]string)
			for _, it := range items {
				fields[it] = ""
			}
			// A fair queue: redisson_lock_queue:{name}.
			name := k[strings.IndexByte(k, '{')+1 : len(k)-1]
			desc += fmt.Sprintf(": %v%s%s", items, r.holdersOf(fields), r.historyOf(fields, name))
		case "zset":
			// Fair waiters' deadlines, Unix ms (the queue's report has their calls).
			items, _ := r.direct.Do(ctx, r.direct.B().Zrange().Key(k).Min("0").Max("-1").Withscores().Build()).AsZScores()
			fields := make(map[string]string)
			for _, it := range items {
				due := time.UnixMilli(int64(it.Score))
				fields[it.Member] = ""
				desc += fmt.Sprintf(" %s due %v ago (+%v in the run)", it.Member, time.Since(due).Round(time.Millisecond), due.Sub(r.t0).Round(time.Millisecond))
			}
			desc += r.holdersOf(fields)
		}
		r.chk.violate(3, desc, now, now)
	}
	for _, cc := range r.clients {
		if n, co := cc.c.holds.len(), cc.c.cohorts(); n != 0 || co != 0 {
			owners := make(map[string]string)
			for i := range cc.c.holds.shards {
				s := &cc.c.holds.shards[i]
				s.mu.Lock()
				for _, h := range s.m {
					owners[h.owner.field] = ""
				}
				s.mu.Unlock()
			}
			r.chk.violate(3, fmt.Sprintf("c%d still has %d holds and %d local queues after every worker released: %s%s",
				cc.i, n, co, chaosTable(cc.c, ""), r.historyOf(owners, "")), now, now)
		}
	}
}

// staleFairQueue reports whether k is a fair lock's queue or timeouts key whose every waiter's
// deadline has passed and which expires by itself.
func (r *chaosRun) staleFairQueue(ctx context.Context, k string) bool {
	i := strings.IndexByte(k, '{')
	if i < 0 || !strings.HasSuffix(k, "}") {
		return false
	}
	prefix, tag := k[:i], k[i:]
	if prefix != "redisson_lock_queue:" && prefix != "redisson_lock_timeout:" {
		return false
	}
	timeouts := "redisson_lock_timeout:" + tag
	for _, key := range []string{"redisson_lock_queue:" + tag, timeouts} {
		if pttl, err := r.direct.Do(ctx, r.direct.B().Pttl().Key(key).Build()).AsInt64(); err != nil || pttl == -1 {
			return false
		}
	}
	items, err := r.direct.Do(ctx, r.direct.B().Zrange().Key(timeouts).Min("0").Max("-1").Withscores().Build()).AsZScores()
	if err != nil {
		return false
	}
	for _, it := range items {
		if time.UnixMilli(int64(it.Score)).After(time.Now()) {
			return false
		}
	}
	return true
}

// chaosFairDeadlineWait bounds how long checkLeftovers waits for fair queue entries still due.
// An entry is due a fair wait time (DefaultFairWaitTime) after the one ahead of it, so a queue
// of a few waiters left at the end is due within a few of them.
const chaosFairDeadlineWait = 3 * DefaultFairWaitTime

// awaitFairDeadlines waits, up to chaosFairDeadlineWait, until every fair queue entry in Redis
// is past its deadline. A waiter that gave up near the end of the run may have been queued
// again by its own attempt arriving after its leave, or its leave refused (an OOM episode) with
// its Client closed before the resolver could send it again: such an entry stays until its
// deadline, which can lie a few seconds past the check (a CI-length run saw one due 270 ms after
// it), and the fair lock then passes it by. staleFairQueue accepts it only once that is so; an
// entry still due after the wait is a leftover.
func (r *chaosRun) awaitFairDeadlines() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	keys, err := r.direct.Do(ctx, r.direct.B().Keys().Pattern("redisson_lock_timeout:*").Build()).AsStrSlice()
	if err != nil {
		return // checkLeftovers reports what it cannot read
	}
	var last time.Time
	for _, k := range keys {
		items, err := r.direct.Do(ctx, r.direct.B().Zrange().Key(k).Min("0").Max("-1").Withscores().Build()).AsZScores()
		if err != nil {
			return
		}
		for _, it := range items {
			if due := time.UnixMilli(int64(it.Score)); due.After(last) {
				last = due
			}
		}
	}
	if wait := time.Until(last); wait > 0 {
		wait = min(wait+50*time.Millisecond, chaosFairDeadlineWait)
		r.t.Logf("chaos: a fair queue entry is due %v after the end of the run: waiting %v for it before checking leftovers", time.Until(last).Round(time.Millisecond), wait.Round(time.Millisecond))
		time.Sleep(wait)
	}
}

// holdersOf names the workers whose Owner fields are among the keys of fields.
func (r *chaosRun) holdersOf(fields map[string]string) string {
	var names []string
	for f := range fields {
		if w, ok := r.workers.Load(strings.TrimSuffix(f, ":write")); ok {
			names = append(names, fmt.Sprintf("…%s is %s", f[max(len(f)-12, 0):], w))
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return " (" + strings.Join(names, "; ") + ")"
}

// historyOf lists the last lock calls of the workers whose Owner fields are among the keys of
// fields, and their last call on the lock name.
func (r *chaosRun) historyOf(fields map[string]string, name string) string {
	var b strings.Builder
	r.histMu.Lock()
	defer r.histMu.Unlock()
	for f := range fields {
		if w, ok := r.workers.Load(strings.TrimSuffix(f, ":write")); ok {
			fmt.Fprintf(&b, "\n    %s's last lock calls:", w)
			for _, h := range r.history[w.(string)] {
				fmt.Fprintf(&b, "\n      %s", h)
			}
			if name != "" {
				fmt.Fprintf(&b, "\n    and its last on %s: %s", name, r.lastOn[w.(string)+" "+name])
			}
		}
	}
	return b.String()
}

// chaosTable describes c's hold table and local queues, or only their entries for name if it is
// not empty.
func chaosTable(c *Client, name string) string {
	var parts []string
	now := c.now()
	for i := range c.holds.shards {
		s := &c.holds.shards[i]
		s.mu.Lock()
		for k, h := range s.m {
			if n, _, _ := strings.Cut(k, "\x00"); name != "" && n != name {
				continue
			}
			parts = append(parts, fmt.Sprintf("hold %q owner %s field %s count %d watchdog %v lease %v set %v ago",
				k, h.owner.field, h.field, h.count, h.watchdog, time.Duration(h.lease), time.Duration(now-h.lastSet)))
		}
		for k, e := range s.co {
			if name != "" && k != name {
				continue
			}
			parts = append(parts, fmt.Sprintf("queue %q busy %v holder %q %d waiting", k, e.busy, e.holder.field, len(e.queue)))
		}
		s.mu.Unlock()
	}
	slices.Sort(parts)
	return "[" + strings.Join(parts, "; ") + "]"
}

// describeKey reads a lock hash and its PTTL, for a report.
func (r *chaosRun) describeKey(name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fields, err := r.direct.Do(ctx, r.direct.B().Hgetall().Key(name).Build()).AsStrMap()
	pttl, err2 := r.direct.Do(ctx, r.direct.B().Pttl().Key(name).Build()).AsInt64()
	if err = errors.Join(err, err2); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%v PTTL %dms%s", fields, pttl, r.holdersOf(fields))
}

// chaosChecker is the external checker: it knows what each worker did and when, and does not
// trust the lock.
//
// Invariant 1 (exclusion). A lease-based lock excludes others only while its lease runs, and the
// lease of a grant starts in Redis no earlier than the call that asked for it: a correct lock
// keeps a grant whose call started at start, with lease L, exclusive until at least start + L
// (or its release), whatever happened in between. The checker takes half of that: a holder
// counts as inside from when it enters the table until it leaves or start + L/2 passes,
// whichever is first, and one whose call returned at or after start + L/2 never enters (a late
// grant: it just unlocks). A holder entering while another is inside, one of them exclusive, is
// a violation: the two grants were both live in Redis at once, or the lock said "yours" for a
// hold Redis did not have. Workers leave before their window ends; the checker counts the window
// and not the worker's sleep, so a worker that oversleeps its window does not make a violation.
//
// Invariant 2 (fencing). A FencedMutex holder that enters must carry a token above the last one
// that entered on the name: tokens grow with grants, and entries follow grants in a correct lock.
type chaosChecker struct {
	r *chaosRun

	mu    sync.Mutex
	names map[string]*chaosName
	// violations by invariant (index 1–5), and their descriptions in order.
	counts     [6]int
	violations []string
	// counts by kind
	grants, late, denied [numChaosKinds]int
	errs                 map[string]int // "<kind> lock|unlock: <class>"
	worst                [numChaosKinds]time.Duration
	worstOp              [numChaosKinds]string
	worstUnlock          time.Duration

	leaseChecks atomic.Int64
}

// chaosName is a name's occupancy.
type chaosName struct {
	inside    []*chaosOp
	lastToken int64
	lastOp    *chaosOp
}

func newChaosChecker(r *chaosRun) *chaosChecker {
	return &chaosChecker{r: r, names: make(map[string]*chaosName), errs: make(map[string]int)}
}

// enter records op's grant and enters it into the occupancy table if its window is still open;
// it reports whether it did.
func (k *chaosChecker) enter(op *chaosOp) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.r.since()
	if now >= op.winEnd {
		k.late[op.kind]++
		return false
	}
	k.grants[op.kind]++
	n := k.names[op.name]
	if n == nil {
		n = &chaosName{}
		k.names[op.name] = n
	}
	op.enter = now
	for _, o := range n.inside {
		if now < o.winEnd && (op.exclusive() || o.exclusive()) {
			k.violateLocked(1, fmt.Sprintf("two holders of %q at +%v:\n    entering: %v\n    inside:   %v",
				op.name, now.Round(time.Microsecond), op, o), min(op.start, o.start), now)
		}
	}
	if op.kind == kindFenced {
		if op.token <= n.lastToken {
			k.violateLocked(2, fmt.Sprintf("fencing token of %q went back at +%v:\n    entering: %v\n    earlier:  %v",
				op.name, now.Round(time.Microsecond), op, n.lastOp), min(op.start, n.lastOp.start), now)
		}
		n.lastToken, n.lastOp = op.token, op
	}
	n.inside = append(n.inside, op)
	return true
}

// leave takes op out of the occupancy table.
func (k *chaosChecker) leave(op *chaosOp) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := k.names[op.name]
	if i := slices.Index(n.inside, op); i >= 0 {
		n.inside = slices.Delete(n.inside, i, i+1)
	}
}

// returned records a lock call's outcome: over is how long after its deadline it returned
// (invariant 4).
func (k *chaosChecker) returned(op *chaosOp, over time.Duration, granted bool, err error, first bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if over > k.worst[op.kind] {
		k.worst[op.kind], k.worstOp[op.kind] = over, op.String()
	}
	if bound := k.r.callBound(); over > bound {
		k.violateLocked(4, fmt.Sprintf("lock call returned %v after its deadline (bound %v), err %v: %v", over, bound, err, op),
			op.start, op.ret)
	}
	switch {
	case err != nil:
		k.errs[op.kind.String()+" lock: "+chaosErrClass(err)]++
	case !granted && first:
		k.denied[op.kind]++
	}
}

// released records a release's outcome.
func (k *chaosChecker) released(op *chaosOp, took time.Duration, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.worstUnlock = max(k.worstUnlock, took)
	if err != nil {
		k.errs[op.kind.String()+" unlock: "+chaosErrClass(err)]++
	}
}

// chaosErrClass sorts errors for the summary.
func chaosErrClass(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, ErrNotOwner):
		return "not owner"
	case errors.Is(err, ErrClosed):
		return "closed"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "i/o timeout"
	case errors.Is(err, ErrNotSynced):
		return "not synced"
	}
	if _, ok := rueidis.IsRedisErr(err); ok {
		return "redis error"
	}
	return "network"
}

func (k *chaosChecker) violate(inv int, desc string, from, to time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.violateLocked(inv, desc, from, to)
}

// violateLocked records a violation of invariant inv between offsets from and to, with the
// faults around them.
func (k *chaosChecker) violateLocked(inv int, desc string, from, to time.Duration) {
	k.counts[inv]++
	if len(k.violations) >= 50 {
		return
	}
	s := fmt.Sprintf("invariant %d: %s", inv, desc)
	if inv == 3 {
		// Found at the end: the whole schedule is printed.
		k.violations = append(k.violations, s)
		return
	}
	var near []string
	k.r.faultMu.Lock()
	for _, f := range k.r.faults {
		if f.at <= to+500*time.Millisecond && f.at+f.dur >= from-2*time.Second {
			near = append(near, "      "+f.String())
		}
	}
	k.r.faultMu.Unlock()
	if len(near) > 0 {
		s += "\n    faults around it:\n" + strings.Join(near, "\n")
	} else {
		s += "\n    no fault around it"
	}
	k.violations = append(k.violations, s)
}

// report logs the summary and fails the test on any violation.
func (k *chaosChecker) report() {
	t := k.r.t
	k.mu.Lock()
	defer k.mu.Unlock()
	var kinds []string
	for i := range numChaosKinds {
		kinds = append(kinds, fmt.Sprintf("%v %d/%d/%d", chaosKind(i), k.grants[i], k.late[i], k.denied[i]))
	}
	var errs []string
	for e, n := range k.errs {
		errs = append(errs, fmt.Sprintf("%s %d", e, n))
	}
	slices.Sort(errs)
	var worst time.Duration
	for _, w := range k.worst {
		worst = max(worst, w)
	}
	applied := 0
	k.r.faultMu.Lock()
	for _, f := range k.r.faults {
		if f.applied > 0 {
			applied++
		}
		if f.err != nil {
			t.Errorf("fault not applied as planned, the run tested less than it says: %v", f)
		}
	}
	k.r.faultMu.Unlock()
	var stats []string
	for _, cc := range k.r.clients {
		s := cc.c.snapshot()
		stats = append(stats, fmt.Sprintf("c%d handoffs %d passes %d yields %d waits %d not synced %d", cc.i, s.Handoffs, s.Passes, s.Yields, s.SyncWaits, s.NotSynced))
	}
	t.Logf("chaos summary: seed %d, %v, %d faults; grants/late/denied: %s; errors: %s; worst return past deadline %v (bound %v), worst unlock %v; %d lease checks; %s; violations by invariant 1-5: %v",
		k.r.cfg.seed, k.r.cfg.duration, applied, strings.Join(kinds, ", "), strings.Join(errs, ", "), worst.Round(time.Millisecond),
		k.r.callBound(), k.worstUnlock.Round(time.Millisecond), k.leaseChecks.Load(), strings.Join(stats, ", "), k.counts[1:])
	for i, w := range k.worst {
		if w > k.r.callBound()/2 {
			t.Logf("slowest %v return: %v past its deadline: %s", chaosKind(i), w.Round(time.Millisecond), k.worstOp[i])
		}
	}
	for _, v := range k.violations {
		t.Error(v)
	}
	if total := k.counts[1] + k.counts[2] + k.counts[3] + k.counts[4] + k.counts[5]; total > len(k.violations) {
		t.Errorf("%d more violations not shown", total-len(k.violations))
	}
}
