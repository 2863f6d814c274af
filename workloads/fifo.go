package workloads

import (
	"slices"
	"sync"
	"sync/atomic"
)

// fifoShards spreads the FIFO tracker's keys over this many mutexes.
const fifoShards = 64

// FIFOTracker measures whether grants follow arrival order, without trusting the lock: a worker
// takes a ticket when it calls Lock (Arrive), and when its Lock returns (Granted) the grant is in
// order if no worker with an earlier ticket for the same key is still waiting. Only queued grants
// count, those whose worker arrived while the key was held or waited on; see
// results.FIFOFidelity for the rule. It keeps state only for keys in use, and sees the workers of
// this process only. It is safe for concurrent use.
type FIFOTracker struct {
	shards          [fifoShards]fifoShard
	queued, inOrder atomic.Int64
}

type fifoShard struct {
	mu   sync.Mutex
	keys map[int]*fifoKey
	_    [40]byte // keep neighbouring shards' mutexes off one cache line
}

// fifoKey is one key's arrivals: the next ticket, the tickets still waiting, the holders.
type fifoKey struct {
	next    uint64
	waiting []uint64
	held    int
}

// NewFIFOTracker returns an empty tracker.
func NewFIFOTracker() *FIFOTracker {
	t := &FIFOTracker{}
	for i := range t.shards {
		t.shards[i].keys = map[int]*fifoKey{}
	}
	return t
}

// Arrival is a worker's place in a key's arrival order, from Arrive.
type Arrival struct {
	ticket uint64
	queued bool // the key was held or waited on when the worker arrived
}

func (t *FIFOTracker) shard(key int) *fifoShard { return &t.shards[uint(key)%fifoShards] }

// Arrive records a worker starting to wait for key.
func (t *FIFOTracker) Arrive(key int) Arrival {
	s := t.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[key]
	if k == nil {
		k = &fifoKey{}
		s.keys[key] = k
	}
	a := Arrival{ticket: k.next, queued: k.held > 0 || len(k.waiting) > 0}
	k.next++
	k.waiting = append(k.waiting, a.ticket)
	return a
}

// Granted records that the worker of a got key. When count is true (the measured phase) a queued
// grant is counted, as in order or not.
func (t *FIFOTracker) Granted(key int, a Arrival, count bool) {
	s := t.shard(key)
	s.mu.Lock()
	k := s.keys[key]
	k.waiting = removeTicket(k.waiting, a.ticket)
	k.held++
	earlier := slices.ContainsFunc(k.waiting, func(w uint64) bool { return w < a.ticket })
	s.mu.Unlock()
	if count && a.queued {
		t.queued.Add(1)
		if !earlier {
			t.inOrder.Add(1)
		}
	}
}

// Abandon records that the worker of a stopped waiting without the lock.
func (t *FIFOTracker) Abandon(key int, a Arrival) {
	s := t.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[key]
	k.waiting = removeTicket(k.waiting, a.ticket)
	s.drop(key, k)
}

// Released records that a holder of key let it go (call it before the release, so that the next
// arrival already sees the key as held only if someone else holds it).
func (t *FIFOTracker) Released(key int) {
	s := t.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[key]
	k.held--
	s.drop(key, k)
}

// drop forgets an idle key, so a run over many keys keeps state for the busy ones only. The
// ticket count restarts, which is harmless: nobody holds an older ticket.
func (s *fifoShard) drop(key int, k *fifoKey) {
	if k.held <= 0 && len(k.waiting) == 0 {
		delete(s.keys, key)
	}
}

// Counts returns the queued grants and the in-order ones among them.
func (t *FIFOTracker) Counts() (queued, inOrder int64) { return t.queued.Load(), t.inOrder.Load() }

func removeTicket(ts []uint64, ticket uint64) []uint64 {
	if i := slices.Index(ts, ticket); i >= 0 {
		return slices.Delete(ts, i, i+1)
	}
	return ts
}
