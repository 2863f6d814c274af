package lockcore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/internal/lockhooks"
	"github.com/redis/rueidis"
)

// gateClient is a real rueidis client whose next Do, once armed, waits for the gate to open:
// the call in flight that makes every operation after it queue for a batch.
type gateClient struct {
	rueidis.Client
	armed   atomic.Bool
	blocked atomic.Int64
	gate    chan struct{}
}

func (g *gateClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if g.armed.CompareAndSwap(true, false) {
		g.blocked.Add(1)
		<-g.gate
	}
	return g.Client.Do(ctx, cmd)
}

// gatedClient returns a lockcore Client on e whose next call blocks until open is called.
func gatedClient(t *testing.T, e *testEnv, opt Options) (*Client, *gateClient) {
	t.Helper()
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: e.opt.InitAddress, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rdb.Close)
	gc := &gateClient{Client: rdb, gate: make(chan struct{})}
	opt.Client = gc
	return e.client(t, opt), gc
}

// queued returns how many operations wait in c's batch queue (one server: one group).
func (c *Client) queued() int {
	g := &c.batch.one
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// In the earlier mode (BatchInFlight 1), operations queued behind a call in flight go out as one
// script call, and each caller gets its own answer: a grant, a lock taken by another client, an
// unlock by a non-owner.
func TestBatchDemultiplexesResults(t *testing.T) {
	e := newEnv(t)
	c, gc := gatedClient(t, e, Options{knobs: lockhooks.Knobs{BatchInFlight: 1}})
	other := e.client(t, Options{})
	ctx := ctxT(t, 20*time.Second)
	const n = 24
	gc.armed.Store(true)
	firstOwner := c.NewOwner()
	first := make(chan error, 1)
	go func() { first <- c.Mutex("first").Lock(ctx, firstOwner) }()
	waitFor(t, func() bool { return gc.blocked.Load() == 1 })
	d := startDemux(t, e, ctx, c, other, n)
	waitFor(t, func() bool { return c.queued() == n })
	before := c.snapshot()
	close(gc.gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	d.check()
	s := c.snapshot()
	if s.Batches-before.Batches != 1 || s.BatchedOps-before.BatchedOps != n {
		t.Errorf("%d batches carrying %d operations; want the %d queued in one", s.Batches-before.Batches, s.BatchedOps-before.BatchedOps, n)
	}
	if s.Queued < n || s.QueueWait <= 0 {
		t.Errorf("Stats: %d queued, mean wait %v; want %d queued and a wait", s.Queued, s.QueueWait, n)
	}
	d.release()
	if err := c.Mutex("first").Unlock(ctx, firstOwner); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}

// demux is n operations issued on one Client at once, each wanting its own answer: every third a
// TryLock of a lock another client holds (false), a Lock of a free lock (granted), an Unlock by a
// non-owner (ErrNotOwner).
type demux struct {
	t        *testing.T
	e        *testEnv
	ctx      context.Context
	c, other *Client
	holder   Owner
	owners   []Owner
	results  []chan demuxResult
}

type demuxResult struct {
	ok  bool
	err error
}

// startDemux has other take the locks the TryLocks will find held, then issues the n operations
// on c, each from its own goroutine.
func startDemux(t *testing.T, e *testEnv, ctx context.Context, c, other *Client, n int) *demux {
	t.Helper()
	d := &demux{t: t, e: e, ctx: ctx, c: c, other: other, holder: other.NewOwner(),
		owners: make([]Owner, n), results: make([]chan demuxResult, n)}
	for i := 0; i < n; i += 3 {
		if err := other.Mutex(fmt.Sprintf("taken:%d", i)).Lock(ctx, d.holder); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		d.results[i] = make(chan demuxResult, 1)
		d.owners[i] = c.NewOwner()
		go func() {
			var r demuxResult
			switch i % 3 {
			case 0:
				r.ok, r.err = c.Mutex(fmt.Sprintf("taken:%d", i)).TryLock(ctx, d.owners[i], 0, 0)
			case 1:
				r.err = c.Mutex(fmt.Sprintf("free:%d", i)).Lock(ctx, d.owners[i])
				r.ok = r.err == nil
			case 2:
				r.err = c.Mutex(fmt.Sprintf("never:%d", i)).Unlock(ctx, d.owners[i])
			}
			d.results[i] <- r
		}()
	}
	return d
}

// check waits for every answer and checks it.
func (d *demux) check() {
	t := d.t
	t.Helper()
	for i := range d.results {
		r := <-d.results[i]
		switch i % 3 {
		case 0:
			if r.ok || r.err != nil {
				t.Errorf("TryLock of a lock another client holds = %v, %v; want false, nil", r.ok, r.err)
			}
		case 1:
			if !r.ok {
				t.Errorf("Lock of a free lock: %v", r.err)
			} else if got := d.e.int(t, "HGET", fmt.Sprintf("free:%d", i), d.owners[i].Field()); got != 1 {
				t.Errorf("free:%d hold count %d, want 1", i, got)
			}
		case 2:
			if !errors.Is(r.err, ErrNotOwner) {
				t.Errorf("Unlock by a non-owner = %v, want ErrNotOwner", r.err)
			}
		}
	}
}

// release gives back the locks the operations and the other client took.
func (d *demux) release() {
	d.t.Helper()
	for i := range d.owners {
		var err error
		switch i % 3 {
		case 0:
			err = d.other.Mutex(fmt.Sprintf("taken:%d", i)).Unlock(d.ctx, d.holder)
		case 1:
			err = d.c.Mutex(fmt.Sprintf("free:%d", i)).Unlock(d.ctx, d.owners[i])
		}
		if err != nil {
			d.t.Fatal(err)
		}
	}
}

// A lock attempt whose ctx ends while it waits in the batch queue returns at once with ctx's
// error and never reaches Redis; the lock stays free and the local queue moves on.
func TestBatchQueuedAttemptCanceled(t *testing.T) {
	e := newEnv(t)
	c, gc := gatedClient(t, e, Options{knobs: lockhooks.Knobs{BatchInFlight: 1}})
	ctx := ctxT(t, 20*time.Second)
	gc.armed.Store(true)
	firstOwner := c.NewOwner()
	first := make(chan error, 1)
	go func() { first <- c.Mutex("first").Lock(ctx, firstOwner) }()
	waitFor(t, func() bool { return gc.blocked.Load() == 1 })

	cctx, cancel := context.WithCancel(ctx)
	victim := make(chan error, 1)
	go func() { victim <- c.Mutex("victim").Lock(cctx, c.NewOwner()) }()
	waitFor(t, func() bool { return c.queued() == 1 })
	cancel()
	// The gate is still closed: only leaving the queue can end this wait.
	if err := <-victim; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled queued Lock = %v, want context.Canceled", err)
	}
	if q := c.queued(); q != 0 {
		t.Fatalf("%d operations still queued after the cancel", q)
	}
	close(gc.gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := e.int(t, "EXISTS", "victim"); n != 0 {
		t.Fatal("the canceled attempt took the lock")
	}
	later := c.NewOwner()
	if ok, err := c.Mutex("victim").TryLock(ctx, later, 0, 0); !ok || err != nil {
		t.Fatalf("TryLock after the canceled attempt = %v, %v; want the lock", ok, err)
	}
	if c.snapshot().Batches != 0 {
		t.Fatal("the canceled attempt went out in a batch")
	}
	if err := c.Mutex("first").Unlock(ctx, firstOwner); err != nil {
		t.Fatal(err)
	}
	if err := c.Mutex("victim").Unlock(ctx, later); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}

// batchScript does what each single script does: grants and PTTLs, renewals, partial and full
// releases, the unlock message on Redisson's channel (hash-tagged names included), and a key of
// the wrong type fails its own operation only.
func TestBatchScriptMatchesSingleScripts(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t, 10*time.Second)
	e.do(t, "SET", "str", "x")
	sub, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: e.opt.InitAddress, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	msgs := make(chan string, 4)
	subCtx, stop := context.WithCancel(ctx)
	go func() {
		sub.Receive(subCtx, sub.B().Subscribe().Channel("redisson_lock__channel:{a}", "redisson_lock__channel:x{t}y").Build(),
			func(m rueidis.PubSubMessage) { msgs <- m.Channel + "=" + m.Message })
	}()
	waitFor(t, func() bool { return e.numsub(t, "redisson_lock__channel:x{t}y") == 1 })
	defer stop()

	run := func(keys []string, args ...string) []rueidis.RedisMessage {
		t.Helper()
		vals, err := batchScript.exec(ctx, e.rdb, keys, batchArgs(false, "publish", args...)).ToArray()
		if err != nil || len(vals) != len(keys) {
			t.Fatalf("batch %v: %d replies, %v", keys, len(vals), err)
		}
		return vals
	}
	isNil := func(m rueidis.RedisMessage) bool { return m.IsNil() }
	num := func(m rueidis.RedisMessage) int64 {
		n, err := m.AsInt64()
		if err != nil {
			t.Fatalf("reply %v: %v", m, err)
		}
		return n
	}
	// a: taken twice by f1 (reentry), refused to f2; x{t}y taken; str is a string.
	v := run([]string{"a", "a", "a", "str", "x{t}y"},
		"l", "1000", "f1", "l", "1000", "f1", "l", "1000", "f2", "l", "1000", "f1", "l", "1000", "f1")
	if !isNil(v[0]) || !isNil(v[1]) || isNil(v[2]) || num(v[2]) <= 0 || !isNil(v[4]) {
		t.Fatalf("lock replies %v", v)
	}
	if _, ok := rueidis.IsRedisErr(v[3].Error()); !ok {
		t.Fatalf("lock of a string key replied %v, want a WRONGTYPE error", v[3])
	}
	if got := e.int(t, "HGET", "a", "f1"); got != 2 {
		t.Fatalf("reentrant count %d, want 2", got)
	}
	// Renew f1 on a for 60 s, f2 is not held; partial unlock keeps the lease.
	v = run([]string{"a", "a", "a"}, "r", "60000", "f1", "r", "60000", "f2", "u", "60000", "f1")
	if num(v[0]) != 1 || num(v[1]) != 0 || num(v[2]) != 0 {
		t.Fatalf("renew/partial unlock replies %v", v)
	}
	if pttl := e.int(t, "PTTL", "a"); pttl <= 1000 {
		t.Fatalf("PTTL %d after renewal to 60 s", pttl)
	}
	// Full releases publish "0" on each lock's channel; a non-owner gets nil; a pass with a
	// subscriber somewhere (our subscription, 0 of them our own) leaves the lock free.
	v = run([]string{"a", "a", "str", "x{t}y"}, "u", "1000", "f1", "u", "1000", "f1", "u", "1000", "f1", "p", "1000", "f1", "w", "1000", "0")
	if num(v[0]) != 1 || !isNil(v[1]) || num(v[3]) != 1 {
		t.Fatalf("unlock replies %v", v)
	}
	if _, ok := rueidis.IsRedisErr(v[2].Error()); !ok {
		t.Fatalf("unlock of a string key replied %v, want a WRONGTYPE error", v[2])
	}
	got := map[string]bool{}
	for range 2 {
		select {
		case m := <-msgs:
			got[m] = true
		case <-ctx.Done():
			t.Fatalf("release messages: got %v", got)
		}
	}
	if !got["redisson_lock__channel:{a}=0"] || !got["redisson_lock__channel:x{t}y=0"] {
		t.Fatalf("release messages %v", got)
	}
	// With the only subscriber counted as our own, a pass grants the waiter in the same call.
	run([]string{"x{t}y"}, "l", "1000", "f1")
	v = run([]string{"x{t}y"}, "p", "1000", "f1", "w", "5000", "1")
	if num(v[0]) != 2 || e.int(t, "HGET", "x{t}y", "w") != 1 {
		t.Fatalf("pass reply %v", v)
	}
	e.do(t, "DEL", "x{t}y")
	e.do(t, "DEL", "str")
	stop()
	e.assertNoKeys(t)
}

// On a cluster, batches form per master (node batches, see cluster.go) or, kept per slot, per
// hash slot: keys sharing hash tags batch, keys of other slots on the same node meet in one call
// only as a node batch (never CROSSSLOT), and mutual exclusion holds either way.
func TestBatchOnClusterStaysInSlot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 6-node cluster")
	}
	cl := redistest.NewCluster(t)
	e := newEnvFor(t, rueidis.ClientOption{InitAddress: cl.Addrs()}, cl.Masters(), true)
	for _, perSlot := range []bool{true, false} {
		t.Run(fmt.Sprintf("slotBatches=%v", perSlot), func(t *testing.T) { testBatchOnCluster(t, e, perSlot) })
	}
}

func testBatchOnCluster(t *testing.T, e *testEnv, perSlot bool) {
	c := e.client(t, Options{slotBatches: perSlot})
	ctx := ctxT(t, 60*time.Second)
	const workers, rounds, tags, perTag = 32, 150, 6, 4
	var occupancy [tags * perTag]atomic.Int32
	var violations atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := c.NewOwner()
			for i := range rounds {
				k := (w*7 + i) % (tags * perTag)
				m := c.Mutex(fmt.Sprintf("{tag%d}:k%d", k%tags, k/tags))
				if err := m.Lock(ctx, o); err != nil {
					errs <- err
					return
				}
				if occupancy[k].Add(1) != 1 {
					violations.Add(1)
				}
				occupancy[k].Add(-1)
				if err := m.Unlock(ctx, o); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d mutual exclusion violations", v)
	}
	s := c.snapshot()
	if s.Batches == 0 {
		t.Fatalf("no batch formed over %d keys in %d slots: %+v", tags*perTag, tags, s)
	}
	t.Logf("%d batches (%d across slots) carried %d of %d operations", s.Batches, c.stats.nodeBatches.Load(), s.BatchedOps, 2*workers*rounds)
	if nb := c.stats.nodeBatches.Load(); perSlot != (nb == 0) {
		t.Fatalf("%d node batches with slotBatches %v", nb, perSlot)
	}
	e.assertNoKeys(t)
	// keySlot agrees with the server on plain keys and on every hash-tag rule.
	for _, key := range []string{"123456789", "foo", "{tag1}:k0", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "a{", "}b{c}", ""} {
		want := e.int(t, "CLUSTER", "KEYSLOT", key)
		if got := keySlot(key); int64(got) != want {
			t.Errorf("keySlot(%q) = %d, the server says %d", key, got, want)
		}
	}
}

// With BatchInFlight 2, a second operation goes out on its own while the first is in flight, and
// only a third queues for a batch; all three get their answers once the calls return.
func TestBatchInFlightBound(t *testing.T) {
	e := newEnv(t)
	c, gc := gatedClient(t, e, Options{knobs: lockhooks.Knobs{BatchInFlight: 2}})
	ctx := ctxT(t, 20*time.Second)
	errs := make(chan error, 3)
	owners := [3]Owner{c.NewOwner(), c.NewOwner(), c.NewOwner()}
	lock := func(i int) {
		go func() { errs <- c.Mutex(fmt.Sprintf("inflight:%d", i)).Lock(ctx, owners[i]) }()
	}
	gc.armed.Store(true)
	lock(0)
	waitFor(t, func() bool { return gc.blocked.Load() == 1 })
	gc.armed.Store(true)
	lock(1)
	waitFor(t, func() bool { return gc.blocked.Load() == 2 })
	if q := c.queued(); q != 0 {
		t.Fatalf("%d operations queued with one call in flight of 2 allowed; want 0", q)
	}
	lock(2)
	waitFor(t, func() bool { return c.queued() == 1 })
	close(gc.gate)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, o := range owners {
		if err := c.Mutex(fmt.Sprintf("inflight:%d", i)).Unlock(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	e.assertNoKeys(t)
}

func TestBatchInFlightOption(t *testing.T) {
	for n, want := range map[int]int{0: 0, 1: 1, 64: 64, -1: -1, -2: -2, 65: -2} {
		o := Options{knobs: lockhooks.Knobs{BatchInFlight: n}}
		err := o.fill()
		switch {
		case want < -1 && err == nil:
			t.Errorf("BatchInFlight %d accepted; want an error", n)
		case want >= -1 && (err != nil || o.knobs.BatchInFlight != want):
			t.Errorf("BatchInFlight %d: %d, %v; want %d", n, o.knobs.BatchInFlight, err, want)
		}
	}
}

// An operation of batchScript that fails must fail alone: a malformed hold count on one lock
// (a reentrant attempt's HINCRBY on a value that is not an integer) used to abort the whole
// script, so that every operation of the call got the error while Redis kept the grants made
// before it: a lock granted to a caller told it failed, held by nobody until its lease ran out.
func TestBatchScriptErrorStaysInItsOperation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t, 10*time.Second)
	e.do(t, "HSET", "bad", "f1", "not-a-count")
	keys := []string{"g1", "bad", "g2", "bad", "g3"}
	args := batchArgs(false, "publish", "l", "1000", "f1", "l", "1000", "f1", "l", "1000", "f1", "u", "1000", "f1", "r", "1000", "f1")
	vals, err := batchScript.exec(ctx, e.rdb, keys, args).ToArray()
	if err != nil || len(vals) != len(keys) {
		t.Fatalf("batch with one malformed count: %d replies, %v; want one reply per operation", len(vals), err)
	}
	if !vals[0].IsNil() || !vals[2].IsNil() {
		t.Fatalf("grants around the failing operation replied %v and %v, want nil (held)", vals[0], vals[2])
	}
	for _, i := range []int{1, 3} {
		if _, ok := rueidis.IsRedisErr(vals[i].Error()); !ok {
			t.Fatalf("operation %d on the malformed count replied %v, want an error", i, vals[i])
		}
	}
	// The renewal after them still ran: g3 is not held, so it reports 0.
	if n, err := vals[4].AsInt64(); err != nil || n != 0 {
		t.Fatalf("renewal after the failing operations replied %v, %v; want 0", n, err)
	}
	for _, k := range []string{"g1", "g2"} {
		if got := e.int(t, "HGET", k, "f1"); got != 1 {
			t.Fatalf("%s count %d, want 1", k, got)
		}
	}
}

// A batch whose operations carry different leases sends the first one's once and every other
// one with its operation (an upper-case opcode), and each lock gets its own lease.
func TestBatchScriptLeasesOfTheirOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t, 10*time.Second)
	args := batchArgs(false, "publish", "l", "5000", "f1", "l", "90000", "f1", "l", "5000", "f1", "l", "90000", "f1")
	if want := []string{"publish", "lLlL", "5000", "f1", "90000", "f1", "f1", "90000", "f1"}; !slices.Equal(args, want) {
		t.Fatalf("ARGV %q, want %q", args, want)
	}
	vals, err := batchScript.exec(ctx, e.rdb, []string{"m1", "m2", "m3", "m2"}, args).ToArray()
	if err != nil || len(vals) != 4 {
		t.Fatalf("batch: %v, %d replies", err, len(vals))
	}
	for i, v := range vals {
		if !v.IsNil() {
			t.Fatalf("operation %d replied %v, want granted", i, v)
		}
	}
	if p := e.int(t, "PTTL", "m1"); p <= 0 || p > 5000 {
		t.Fatalf("m1 PTTL %d, want its lease of 5 s", p)
	}
	if p := e.int(t, "PTTL", "m2"); p <= 60000 {
		t.Fatalf("m2 PTTL %d, want its lease of 90 s", p)
	}
	if p := e.int(t, "PTTL", "m3"); p <= 0 || p > 5000 {
		t.Fatalf("m3 PTTL %d, want its lease of 5 s", p)
	}
	if n := e.int(t, "HGET", "m2", "f1"); n != 2 {
		t.Fatalf("m2 count %d, want 2 (re-entered in the same batch)", n)
	}
	// A partial release with a lease of its own after one that takes the common lease.
	args = batchArgs(false, "publish", "u", "5000", "f1", "u", "40000", "f1")
	vals, err = batchScript.exec(ctx, e.rdb, []string{"m1", "m2"}, args).ToArray()
	if err != nil || len(vals) != 2 {
		t.Fatalf("release batch: %v, %d replies", err, len(vals))
	}
	if n, err := vals[0].AsInt64(); err != nil || n != 1 {
		t.Fatalf("m1 release replied %v, %v; want 1", n, err)
	}
	if n, err := vals[1].AsInt64(); err != nil || n != 0 {
		t.Fatalf("m2 partial release replied %v, %v; want 0", n, err)
	}
	if p := e.int(t, "PTTL", "m2"); p <= 30000 || p > 40000 {
		t.Fatalf("m2 PTTL %d after a partial release with a lease of 40 s", p)
	}
	e.do(t, "DEL", "m2", "m3")
}
