package lockcore

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// Auto-batching of Mutex operations ("natural batching").
//
// Every Mutex lock attempt and release goes through a batch group: one per Client on a single
// server or through sentinels; on a cluster one per master, whose batches carry locks of several
// slots in one nodeBatchScript call (see cluster.go), or, where the server does not allow that,
// one per hash slot (a declared key's slot must be one, so a batch never draws CROSSSLOT). A
// batch of one operation is exactly the call it was before batching (lockScript, unlockScript,
// passScript), so a batch of one costs what it did; a larger one is one batchScript call (or
// nodeBatchScript, when its locks span slots), and each caller gets its own element of the reply.
//
// By default batches gather (see gather): an operation that finds no batch gathering yields the
// processor once, so that the goroutines already runnable — those the last reply woke — run and
// queue theirs, then sends everything queued, in calls of up to Options.MaxBatch (two at least
// once splitAt are queued: see takeQueue), whatever is still in flight. A batch leaves when the
// client has run out of other work, so Redis runs one batch while the client works on the
// replies of the one before, and an idle Client adds one yield. Sending instead when a call
// returns (lockhooks.Knobs.BatchInFlight, the earlier mode) lets the batches fall into step with the
// replies: measured with lockbench run on W1 (64 workers, 10000 keys, redis-server and
// lockbench each on a CPU of their own), one large and one small batch took turns and each side
// idled 40% of the time, 133k acq/s against 180k with no batching; gathering, with calls of 32,
// made 210k, at 4.3 µs of Redis CPU per acquisition against 5.4.
//
// In the earlier mode, while fewer than BatchInFlight calls of the group are in flight
// an operation goes out at once as its own call; otherwise it queues, and when a call of the
// group returns everything queued meanwhile goes out as one batch. Either way the wait an
// operation spends queued is bounded by about one call's round trip, and lockhooks.Stats reports it.
//
// A lock attempt whose ctx ends while it is queued leaves the queue and never reaches Redis. Once
// sent, an operation runs to its reply, as a single call does (see Mutex.try).

const (
	// maxBatch bounds the operations of one batchScript call (Options.MaxBatch at most), and so
	// how long one call holds the server (every operation is a handful of hash commands).
	maxBatch = 128
)

// errBatchReply is a batchScript reply without one element per operation.
var errBatchReply = errors.New("lockcore: batch script reply does not match its operations")

// opKind is one Mutex operation that batches.
type opKind uint8

const (
	opLock   opKind = iota + 1 // lockScript: lease, field
	opUnlock                   // unlockScript: lease, field
	opPass                     // passScript: lease, field, waiter field, waiter lease, own
)

// opCodes are the opcodes of batchScript.
var opCodes = [...]byte{opLock: 'l', opUnlock: 'u', opPass: 'p'}

// op is one queued operation and, once answered, its result.
type op struct {
	kind opKind
	name string
	args [5]string
	n    int
	// done receives once: the result is in (n, err), or, with batch set, the op leads that
	// batch and sends it.
	done   chan struct{}
	batch  *opBatch
	queued int64 // Client.now when queued
	res    int64
	err    error
}

var opPool = sync.Pool{New: func() any { return &op{done: make(chan struct{}, 1)} }}

// opBatch is the operations of one batchScript call, with its argument buffers, reused.
type opBatch struct {
	ops  []*op
	keys []string
	argv batchArgv
	node string // the master of a node group's batch (batchGroup.node), else ""
}

var batchPool = sync.Pool{New: func() any { return &opBatch{} }}

// batchGroup is the operations that may share one script call.
type batchGroup struct {
	mu       sync.Mutex
	inFlight int
	queue    []*op
	// gathering: when gathering (BatchInFlight 0), a leader is yielding and will take the queue; the queue is
	// empty whenever it is false.
	gathering bool
	// node is the address of the cluster master whose slots the group batches (cluster.go);
	// "" for a group of one slot or of a whole server.
	node string
	// onReturn, set before the group is first published and never changed, makes its batches
	// leave when a call returns, with this many in flight, where the Client's knobs leave the
	// choice to lockcore (BatchInFlight 0): 1 for a cluster master with replicas in synced mode
	// (see refreshCluster), 0 (gather) for every other group.
	onReturn int
	// published: the refresh has decided onReturn and installed a view holding the group. Only
	// the refresh reads or writes it.
	published bool
}

// batcher holds a Client's batch groups.
type batcher struct {
	cluster bool
	one     batchGroup
	// slots are the groups of a cluster's hash slots, made on first use; nil elsewhere.
	slots *[clusterSlots]atomic.Pointer[batchGroup]

	// On a cluster (cluster.go): whether batches span the slots of a master (crossOn), the
	// slot → master map they follow, the masters' groups by address (touched by the view's
	// refresh alone), and the refresher's wake-up for a stale view.
	cross      atomic.Int32
	view       atomic.Pointer[clusterView]
	nodeGroups map[string]*batchGroup
	kick       chan struct{}
}

const clusterSlots = 16384

func (b *batcher) init(cluster bool) {
	b.cluster = cluster
	if cluster {
		b.slots = new([clusterSlots]atomic.Pointer[batchGroup])
		b.kick = make(chan struct{}, 1)
	}
}

// group returns the batch group of the lock name: on a cluster, its master's while batches
// span slots and the view knows the master, else its slot's.
func (b *batcher) group(name string) *batchGroup {
	if !b.cluster {
		return &b.one
	}
	slot := keySlot(name)
	if b.cross.Load() == crossOn {
		if v := b.view.Load(); v != nil {
			if i := v.node[slot]; i >= 0 {
				return v.nodes[i].group
			}
		}
	}
	p := &b.slots[slot]
	if g := p.Load(); g != nil {
		return g
	}
	p.CompareAndSwap(nil, &batchGroup{})
	return p.Load()
}

// run performs one Mutex operation, batched when Options.Batch allows, and returns its script's
// result as an int64, or an error (rueidis.Nil for a nil reply). Once sent, the call is not
// canceled by ctx; ctx only ends a wait in the queue, and only for lock attempts.
func (c *Client) run(ctx context.Context, kind opKind, name string, args ...string) (int64, error) {
	if c.opt.knobs.NoBatch {
		return c.single(ctx, kind, name, args)
	}
	g := c.batch.group(name)
	inFlight := c.opt.knobs.BatchInFlight
	if inFlight == 0 {
		inFlight = g.onReturn
	}
	if inFlight <= 0 {
		return c.gather(ctx, g, kind, name, args)
	}
	g.mu.Lock()
	if g.inFlight < inFlight && len(g.queue) == 0 {
		g.inFlight++
		g.mu.Unlock()
		n, err := c.single(ctx, kind, name, args)
		c.finish(g)
		return n, err
	}
	o := c.newOp(kind, name, args)
	g.queue = append(g.queue, o)
	g.mu.Unlock()

	if !c.awaitBatch(ctx, g, o) {
		return 0, ctx.Err()
	}
	if b := o.batch; b != nil {
		c.sendBatch(ctx, b)
		c.finish(g)
	}
	n, err := o.res, o.err
	c.putOp(o)
	return n, err
}

// newOp returns a pooled op for the operation, stamped with the time it queues.
func (c *Client) newOp(kind opKind, name string, args []string) *op {
	o := opPool.Get().(*op)
	o.kind, o.name, o.n = kind, name, copy(o.args[:], args)
	o.queued = c.now()
	return o
}

// awaitBatch waits until o, queued in g, is answered or chosen to send a batch (o.batch). A lock
// attempt whose ctx ends first leaves the queue, and awaitBatch returns false with o given back
// to the pool; once a batch took it, its answer is awaited whatever ctx does.
func (c *Client) awaitBatch(ctx context.Context, g *batchGroup, o *op) bool {
	if o.kind != opLock || ctx.Done() == nil {
		<-o.done // a plain receive: a select costs more, and releases cannot be called off
		return true
	}
	select {
	case <-o.done:
	case <-ctx.Done():
		if c.dequeue(g, o) {
			c.putOp(o)
			return false
		}
		<-o.done // taken into a batch already: its answer is on the way
	}
	return true
}

func (c *Client) putOp(o *op) {
	*o = op{done: o.done}
	opPool.Put(o)
}

// dequeue takes o out of g's queue; false if a batch took it first.
func (c *Client) dequeue(g *batchGroup, o *op) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, q := range g.queue {
		if q == o {
			copy(g.queue[i:], g.queue[i+1:])
			g.queue[len(g.queue)-1] = nil
			g.queue = g.queue[:len(g.queue)-1]
			return true
		}
	}
	return false
}

// finish ends one call of g: if operations queued meanwhile, they go out as the next batch, led
// by the first of them; the call's in-flight slot passes to that batch.
func (c *Client) finish(g *batchGroup) {
	g.mu.Lock()
	if len(g.queue) == 0 {
		g.inFlight--
		g.mu.Unlock()
		return
	}
	b := batchPool.Get().(*opBatch)
	b.node = g.node
	n := min(len(g.queue), c.opt.MaxBatch)
	b.ops = append(b.ops[:0], g.queue[:n]...)
	rest := copy(g.queue, g.queue[n:])
	clear(g.queue[rest:])
	g.queue = g.queue[:rest]
	g.mu.Unlock()
	lead := b.ops[0]
	lead.batch = b
	lead.done <- struct{}{}
}

// sendBatch runs b and answers each of its operations; the leader (b.ops[0]) reads its own.
func (c *Client) sendBatch(ctx context.Context, b *opBatch) {
	now := c.now()
	var waited int64
	for _, o := range b.ops {
		waited += now - o.queued
	}
	c.stats.queueWait.Add(waited)
	c.stats.queued.Add(int64(len(b.ops)))
	switch {
	case len(b.ops) == 1:
		o := b.ops[0]
		o.res, o.err = c.single(ctx, o.kind, o.name, o.args[:o.n])
	case b.node != "" && !oneSlot(b.ops):
		c.stats.batches.Add(1)
		c.stats.batchedOps.Add(int64(len(b.ops)))
		c.sendNodeBatch(ctx, b)
	default:
		c.stats.batches.Add(1)
		c.stats.batchedOps.Add(int64(len(b.ops)))
		b.keys = b.keys[:0]
		b.argv.reset(c.publishCmd, b.ops[0].args[0], false)
		for _, o := range b.ops {
			b.keys = append(b.keys, o.name)
			b.argv.add(o.name, opCodes[o.kind], o.args[0], o.args[1:o.n]...)
		}
		res, unsynced := c.execScript(detach(ctx), batchScript, b.keys, b.argv.argv())
		answerAll(b.ops, res, unsynced)
		clear(b.keys)
		b.argv.clear()
	}
	for _, o := range b.ops[1:] {
		o.done <- struct{}{}
	}
	clear(b.ops)
	b.ops = b.ops[:0]
	b.node = ""
	batchPool.Put(b)
}

// oneSlot reports whether the locks of ops all hash to one slot: a node group's batch that
// does goes as batchScript by the routed path, as a slot group's would.
func oneSlot(ops []*op) bool {
	s := keySlot(ops[0].name)
	for _, o := range ops[1:] {
		if keySlot(o.name) != s {
			return false
		}
	}
	return true
}

// single runs one operation as its own script call, as lockcore did before batching.
func (c *Client) single(ctx context.Context, kind opKind, name string, args []string) (int64, error) {
	ctx = detach(ctx)
	var res rueidis.RedisResult
	var unsynced error
	switch kind {
	case opLock:
		res, unsynced = c.execScript(ctx, lockScript, []string{name}, args)
	case opUnlock:
		res, unsynced = c.execScript(ctx, unlockScript, []string{name, channelName(name)},
			[]string{unlockMessage, args[0], args[1], c.publishCmd})
	case opPass:
		res, unsynced = c.execScript(ctx, passScript, []string{name, channelName(name)},
			[]string{unlockMessage, args[0], args[1], c.publishCmd, args[2], args[3], args[4]})
	}
	if f := syncFailed(unsynced); f != nil {
		return 0, f
	}
	n, err := res.AsInt64()
	if unsynced != nil && (err == nil || rueidis.IsRedisNil(err)) {
		return 0, unsynced
	}
	return n, err
}

// keySlot is the Redis cluster hash slot of key: CRC16 (XMODEM) of its hash tag, or of the whole
// key when it has none, modulo 16384.
func keySlot(key string) uint16 {
	for i := 0; i < len(key); i++ {
		if key[i] == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j > i+1 {
						key = key[i+1 : j]
					}
					return crc16(key) % clusterSlots
				}
			}
			break
		}
	}
	return crc16(key) % clusterSlots
}

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// batchWait converts the queue wait counter to a duration per queued operation.
func batchWait(total, n int64) time.Duration {
	if n == 0 {
		return 0
	}
	return time.Duration(total / n)
}

// gather performs one operation when batches gather (BatchInFlight 0): the operation joins g's queue, and the one
// that finds no leader becomes it: it yields the processor once, so that the goroutines already
// runnable (those a batch reply just woke) run and queue their next operations, then takes the
// queue and sends it, without waiting for batches still in flight. Batches therefore follow the
// client's own rhythm, one per burst of work, and Redis runs one while the client works on the
// replies of another.
func (c *Client) gather(ctx context.Context, g *batchGroup, kind opKind, name string, args []string) (int64, error) {
	o := c.newOp(kind, name, args)
	g.mu.Lock()
	g.queue = append(g.queue, o)
	lead := !g.gathering
	g.gathering = true
	g.mu.Unlock()
	if lead {
		runtime.Gosched()
		c.takeQueue(g, o)
	} else if !c.awaitBatch(ctx, g, o) {
		return 0, ctx.Err()
	}
	if b := o.batch; b != nil {
		c.sendBatch(ctx, b)
	}
	n, err := o.res, o.err
	c.putOp(o)
	return n, err
}

// splitAt is the smallest gathered queue that goes out in two calls rather than one (see
// takeQueue).
const splitAt = 16

// takeQueue empties g's queue into batches of at most Options.MaxBatch, of even sizes; the first
// goes to lead (whose operation is first in the queue), each other to its first operation, woken
// to send it. A queue of splitAt or more goes out in two calls at least: the client then works on
// the first call's replies while Redis runs the second, where with one call each side waits for
// the other. Measured with lockbench run on W1 placed (64 workers, whose gathered queues hold
// about 32), 5 interleaved rounds: one call of 32 made 122,751 acq/s against lockcore:batch=0's
// 124,656; two calls of 16 make 160,495 against batch=0's 141,194 (a later run of a VM whose
// speed drifts: compare within a run). With 256 workers the queues make several calls anyway.
func (c *Client) takeQueue(g *batchGroup, lead *op) {
	g.mu.Lock()
	calls := (len(g.queue) + c.opt.MaxBatch - 1) / c.opt.MaxBatch
	if calls == 1 && len(g.queue) >= splitAt {
		calls = 2
	}
	var leaders []*op
	for len(g.queue) > 0 {
		b := batchPool.Get().(*opBatch)
		b.node = g.node
		n := (len(g.queue) + calls - 1) / calls
		calls--
		b.ops = append(b.ops[:0], g.queue[:n]...)
		rest := copy(g.queue, g.queue[n:])
		clear(g.queue[rest:])
		g.queue = g.queue[:rest]
		b.ops[0].batch = b
		leaders = append(leaders, b.ops[0])
	}
	g.gathering = false
	g.mu.Unlock()
	for _, l := range leaders {
		if l != lead {
			l.done <- struct{}{}
		}
	}
}
