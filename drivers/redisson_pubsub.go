package drivers

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// errRedissonClosed is returned by the Redisson driver's operations after Close.
var errRedissonClosed = errors.New("redisson: client closed")

// redissonSubs is what Redisson's PublishSubscribeService does for RLock waiters: the waiters of
// one lock in this client share one entry and one subscription to the lock's channel; the first
// subscribes, the last unsubscribes; every unlock message releases one permit, which wakes one
// waiter. Like Redisson's subscription connection pool, it spreads channels over up to
// RedissonSubscriptionConnections go-redis PubSub connections (per master, for sharded pub/sub on
// a cluster, where a shard channel lives on its slot's master), a channel always on the same one.
// With a single connection, every waiter's subscription depended on it: the fair lock's waiters
// each subscribe a channel of their own and drop it again per acquisition, and a stress run once
// saw a subscription go unconfirmed for 7.5 s on it (cause not pinned down). It is safe for
// concurrent use. The read-write and fair locks wait the same way on their own channels.
type redissonSubs struct {
	rdb     redis.UniversalClient
	sharded bool // SSUBSCRIBE on the channel's master; rdb is then a *redis.ClusterClient
	permits int  // capacity of each entry's latch
	ctx     context.Context
	cancel  context.CancelFunc
	readers sync.WaitGroup

	mu     sync.Mutex
	conns  map[redissonConnKey]*redissonPSConn
	closed bool
}

// RedissonSubscriptionConnections is how many pub/sub connections the Redisson drivers spread
// their channels over (per master with sharded pub/sub): Redisson's subscriptionConnectionPoolSize
// default. Redisson fills its connections five channels at a time (subscriptionsPerConnection);
// the drivers hash a channel to one of them instead, and open each on first use.
const RedissonSubscriptionConnections = 50

// redissonConnKey names one pub/sub connection: the master it is on ("" when not sharded) and
// its place among RedissonSubscriptionConnections.
type redissonConnKey struct {
	addr string
	slot int
}

// redissonPSConn is one pub/sub connection and the channels subscribed on it.
type redissonPSConn struct {
	s  *redissonSubs
	ps *redis.PubSub
	// mu guards chans and is held while (un)subscribe commands are written, so that the order
	// of commands on the wire is the order of the counters in redissonChanState.
	mu    sync.Mutex
	chans map[string]*redissonChanState
}

// redissonChanState tracks one channel on a connection. Subscriptions and their confirmations
// come in the same order on one connection, so counting them tells which confirmation belongs
// to the live entry, even after an unsubscribe and a new subscribe of the same channel.
type redissonChanState struct {
	sent, acked uint64
	entry       *redissonEntry // the live entry, nil once its last waiter left
}

// redissonEntry is Redisson's RedissonLockEntry: the local waiters of one lock.
type redissonEntry struct {
	conn    *redissonPSConn
	channel string
	refs    int
	seq     uint64        // the confirmation number of this entry's SUBSCRIBE
	ready   chan struct{} // closed when the subscription is confirmed
	isReady bool
	latch   chan struct{} // permits, one per unlock message, as Redisson's semaphore
}

func newRedissonSubs(rdb redis.UniversalClient, sharded bool, permits int) *redissonSubs {
	s := &redissonSubs{rdb: rdb, sharded: sharded, permits: permits, conns: map[redissonConnKey]*redissonPSConn{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// done is closed when the subscriptions are closed; waiters stop waiting then.
func (s *redissonSubs) done() <-chan struct{} { return s.ctx.Done() }

// subscribe joins the waiters of channel, subscribing if it is the first. The caller waits on
// the entry's ready channel before relying on messages, and calls unsubscribe when done.
func (s *redissonSubs) subscribe(ctx context.Context, channel string) (*redissonEntry, error) {
	c, err := s.conn(ctx, channel)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.chans[channel]
	if ch == nil {
		ch = &redissonChanState{}
		c.chans[channel] = ch
	}
	if e := ch.entry; e != nil {
		e.refs++
		return e, nil
	}
	e := &redissonEntry{conn: c, channel: channel, refs: 1, ready: make(chan struct{}), latch: make(chan struct{}, s.permits)}
	ch.sent++
	e.seq = ch.sent
	ch.entry = e
	if s.sharded {
		err = c.ps.SSubscribe(ctx, channel)
	} else {
		err = c.ps.Subscribe(ctx, channel)
	}
	if err != nil {
		// Not sent: no confirmation will count for it. go-redis resubscribes after reconnecting,
		// so take the channel off its list again.
		ch.sent--
		ch.entry = nil
		c.unsubscribeLocked(channel, ch)
		return nil, fmt.Errorf("redisson: subscribe %s: %w", channel, err)
	}
	return e, nil
}

// unsubscribe leaves the waiters of e's channel, unsubscribing if it was the last.
func (s *redissonSubs) unsubscribe(e *redissonEntry) {
	c := e.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.refs--; e.refs > 0 {
		return
	}
	ch := c.chans[e.channel]
	if ch == nil || ch.entry != e {
		return
	}
	ch.entry = nil
	c.unsubscribeLocked(e.channel, ch)
}

// unsubscribeLocked sends the unsubscribe for channel and forgets it once no confirmation is due.
func (c *redissonPSConn) unsubscribeLocked(channel string, ch *redissonChanState) {
	// An error means the connection is gone, and with it the subscription; go-redis has already
	// dropped the channel from the set it resubscribes.
	if c.s.sharded {
		_ = c.ps.SUnsubscribe(c.s.ctx, channel)
	} else {
		_ = c.ps.Unsubscribe(c.s.ctx, channel)
	}
	if ch.acked >= ch.sent {
		delete(c.chans, channel)
	}
}

// conn returns the connection that carries channel, opening it on first use.
func (s *redissonSubs) conn(ctx context.Context, channel string) (*redissonPSConn, error) {
	addr := ""
	var master *redis.Client
	if s.sharded {
		var err error
		master, err = s.rdb.(*redis.ClusterClient).MasterForKey(ctx, channel)
		if err != nil {
			return nil, fmt.Errorf("redisson: master of %s: %w", channel, err)
		}
		addr = master.Options().Addr
	}
	h := fnv.New32a()
	h.Write([]byte(channel))
	key := redissonConnKey{addr: addr, slot: int(h.Sum32() % RedissonSubscriptionConnections)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errRedissonClosed
	}
	if c := s.conns[key]; c != nil {
		return c, nil
	}
	c := &redissonPSConn{s: s, chans: map[string]*redissonChanState{}}
	if master != nil {
		c.ps = master.SSubscribe(s.ctx)
	} else {
		c.ps = s.rdb.Subscribe(s.ctx)
	}
	s.conns[key] = c
	s.readers.Add(1)
	go c.read()
	return c, nil
}

// read delivers confirmations and messages until the subscriptions are closed.
func (c *redissonPSConn) read() {
	defer c.s.readers.Done()
	for {
		msg, err := c.ps.Receive(c.s.ctx)
		if err != nil {
			if c.s.ctx.Err() != nil {
				return
			}
			// go-redis reconnects and resubscribes on the next Receive; do not spin on a dead
			// server meanwhile. Waiters lose nothing but time: they retry after the lock's TTL.
			select {
			case <-c.s.ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" || m.Kind == "ssubscribe" {
				c.confirmed(m.Channel)
			}
		case *redis.Message:
			// Redisson's LockPubSub: an unlock message releases one permit, a read-unlock
			// message (the read-write lock's write release) as many as there are waiters.
			switch m.Payload {
			case redissonUnlockMessage:
				c.released(m.Channel, false)
			case redissonReadUnlockMessage:
				c.released(m.Channel, true)
			}
		}
	}
}

// confirmed counts a subscription confirmation for channel and marks the live entry ready once
// its own confirmation has come.
func (c *redissonPSConn) confirmed(channel string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.chans[channel]
	if ch == nil {
		return
	}
	// Confirmations beyond the subscribes counted are go-redis resubscribing after a reconnect.
	if ch.acked < ch.sent {
		ch.acked++
	}
	if e := ch.entry; e != nil && !e.isReady && e.seq <= ch.acked {
		e.isReady = true
		close(e.ready)
	}
	if ch.entry == nil && ch.acked >= ch.sent {
		delete(c.chans, channel)
	}
}

// released hands one permit to the channel's waiters, or one to each of them if all: that many
// of them will retry.
func (c *redissonPSConn) released(channel string, all bool) {
	c.mu.Lock()
	var e *redissonEntry
	n := 1
	if ch := c.chans[channel]; ch != nil {
		e = ch.entry
		if e != nil && all {
			n = e.refs
		}
	}
	c.mu.Unlock()
	if e == nil {
		return
	}
	for range n {
		select {
		case e.latch <- struct{}{}:
		default: // more permits than waiters could use
			return
		}
	}
}

// close closes every connection and waits for the readers.
func (s *redissonSubs) close() {
	s.mu.Lock()
	s.closed = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	s.cancel()
	for _, c := range conns {
		c.ps.Close()
	}
	s.readers.Wait()
}
