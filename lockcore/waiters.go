package lockcore

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// waitTable coalesces the waiters of one Client: all goroutines waiting on one lock share one
// subscription to its unlock channel, and each unlock message wakes one of them (a permit, as
// Redisson's semaphore), so a release causes one retry, not one per waiter.
type waitTable struct {
	c  *Client
	mu sync.Mutex
	// queues has the live queue per channel; closing has queues whose subscription is being torn
	// down, so that a new queue for the same channel subscribes only after the old one has
	// unsubscribed (else the late UNSUBSCRIBE would cancel the new SUBSCRIBE on the server).
	queues  map[string]*waitQueue
	closing map[string]*waitQueue
	refused subscribeRefusals // pubsub.go
}

// waitQueue is the local waiters of one lock.
type waitQueue struct {
	channel string
	refs    int       // waiters that joined and have not left
	parked  []*waiter // FIFO of waiters sleeping for a wake-up
	permits int       // wake-ups that arrived while nobody was parked
	stopped bool
	// msgs counts the unlock messages the subscription received; watching is the hold-backs
	// that end once it reaches their mark (see holdBack).
	msgs     uint64
	watching []watch

	ready     chan struct{} // closed once the subscription is confirmed
	readyOnce sync.Once
	stop      chan struct{} // closed when the last waiter leaves
	done      chan struct{} // closed when the subscription goroutine has ended
}

// watch is a hold-back that ends once its queue has received until unlock messages.
type watch struct {
	until uint64
	w     *waiter
}

// waiter is one parked goroutine; wake has room for one wake-up so delivery never blocks.
type waiter struct {
	wake chan struct{}
}

var waiterPool = sync.Pool{New: func() any { return &waiter{wake: make(chan struct{}, 1)} }}

func (t *waitTable) init(c *Client) {
	t.c = c
	t.queues = make(map[string]*waitQueue)
	t.closing = make(map[string]*waitQueue)
}

// join registers a waiter for channel, subscribing if it is the first.
func (t *waitTable) join(channel string) *waitQueue {
	t.mu.Lock()
	if t.c.closed.Load() {
		// Close has begun (it sets closed under t.mu, then waits for the background
		// goroutines): start no subscription it would not wait for. The queue is nobody's;
		// the caller's wait ends with the Client's context.
		t.mu.Unlock()
		return &waitQueue{channel: channel, refs: 1, stopped: true, ready: make(chan struct{})}
	}
	q := t.queues[channel]
	if q == nil {
		q = &waitQueue{
			channel: channel,
			ready:   make(chan struct{}),
			stop:    make(chan struct{}),
			done:    make(chan struct{}),
		}
		t.queues[channel] = q
		prev := t.closing[channel]
		t.c.bg.Add(1)
		go t.subscribe(q, prev)
	}
	q.refs++
	t.mu.Unlock()
	return q
}

// own returns how many subscriptions to channel the server may still count for this Client, as
// passScript takes it: "1" while a queue of the channel is live or being torn down (its
// UNSUBSCRIBE not yet confirmed), else "0". It errs towards 1 only in the moment between the
// server processing an UNSUBSCRIBE and the Client reading the reply.
func (t *waitTable) own(channel string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.queues[channel] != nil || t.closing[channel] != nil {
		return "1"
	}
	return "0"
}

// leave unregisters a waiter; the last one out tears the subscription down.
func (t *waitTable) leave(q *waitQueue) {
	t.mu.Lock()
	q.refs--
	if q.refs == 0 && !q.stopped {
		q.stopped = true
		delete(t.queues, q.channel)
		t.closing[q.channel] = q
		close(q.stop)
	}
	t.mu.Unlock()
}

// park sleeps until a wake-up, the timer or done. It reports whether it was woken.
func (t *waitTable) park(q *waitQueue, timer <-chan time.Time, done <-chan struct{}) bool {
	t.mu.Lock()
	if q.permits > 0 {
		q.permits--
		t.mu.Unlock()
		t.c.stats.wakeUps.Add(1)
		return true
	}
	w := waiterPool.Get().(*waiter)
	q.parked = append(q.parked, w)
	t.mu.Unlock()

	woken, timedOut := false, false
	select {
	case <-w.wake:
		woken = true
	case <-timer:
		timedOut = true
	case <-done:
	}
	if !woken {
		t.mu.Lock()
		if !q.remove(w) {
			// Popped by a wake-up that raced with the timer: take it, and the retry that follows
			// serves it, rather than leaving the lock's next release unnoticed.
			<-w.wake
			woken = true
		}
		t.mu.Unlock()
	}
	waiterPool.Put(w)
	switch {
	case woken:
		t.c.stats.wakeUps.Add(1)
	case timedOut:
		t.c.stats.timedWaits.Add(1)
	}
	return woken
}

// remove takes w out of the parked list; false if it was no longer there.
func (q *waitQueue) remove(w *waiter) bool {
	for i, p := range q.parked {
		if p == w {
			copy(q.parked[i:], q.parked[i+1:])
			q.parked[len(q.parked)-1] = nil
			q.parked = q.parked[:len(q.parked)-1]
			return true
		}
	}
	return false
}

// wakeOne hands one wake-up to the longest-parked waiter, or keeps it as a permit.
func (t *waitTable) wakeOne(q *waitQueue) {
	t.mu.Lock()
	if len(q.parked) > 0 {
		w := q.parked[0]
		copy(q.parked, q.parked[1:])
		q.parked[len(q.parked)-1] = nil
		q.parked = q.parked[:len(q.parked)-1]
		w.wake <- struct{}{}
	} else if q.permits < q.refs {
		q.permits++
	}
	t.mu.Unlock()
}

// wakeAll wakes every parked waiter and leaves a permit for each waiter not parked right now
// (it is between attempts and would otherwise miss this release): a write unlock frees the lock
// for all readers at once.
func (t *waitTable) wakeAll(q *waitQueue) {
	t.mu.Lock()
	for i, w := range q.parked {
		w.wake <- struct{}{}
		q.parked[i] = nil
	}
	woken := len(q.parked)
	q.parked = q.parked[:0]
	q.permits = max(q.permits, q.refs-woken)
	t.mu.Unlock()
}

// subscribe holds the subscription of q until its last waiter leaves, resubscribing after
// connection failures. Waiters do not depend on it for progress: they also retry after the TTL.
func (t *waitTable) subscribe(q *waitQueue, prev *waitQueue) {
	defer t.c.bg.Done()
	defer t.finish(q)
	if prev != nil {
		select {
		case <-prev.done:
		case <-t.c.ctx.Done():
			return
		}
	}
	rdb := t.c.rdb
	kind := t.c.subscribedKind()
	backoff := 10 * time.Millisecond
	confirmedBefore := false
	for {
		select {
		case <-q.stop:
			return
		case <-t.c.ctx.Done():
			return
		default:
		}
		confirmed := make(chan struct{})
		var confirmOnce sync.Once
		var counted atomic.Bool // this subscription is counted in the live channels
		again := confirmedBefore
		ctx := rueidis.WithOnSubscriptionHook(t.c.ctx, func(s rueidis.PubSubSubscription) {
			if s.Kind == kind {
				confirmOnce.Do(func() {
					counted.Store(true)
					t.c.stats.channelUp()
					close(confirmed)
					if again {
						// Messages published while the subscription was down are lost: every
						// waiter retries now rather than sleep out the TTL it last saw (the
						// whole lease, 30 s by default, after a network fault).
						t.wakeAll(q)
					}
				})
				q.readyOnce.Do(func() { close(q.ready) })
			}
		})
		ended := make(chan struct{})
		go func() {
			// UNSUBSCRIBE only once SUBSCRIBE is confirmed, so it cannot overtake it.
			select {
			case <-q.stop:
			case <-ended:
				return
			}
			select {
			case <-confirmed:
			case <-ended:
				return
			}
			t.c.stats.unsubscribes.Add(1)
			rdb.Do(t.c.ctx, t.c.unsubscribeCmd(q.channel))
		}()
		confirmedBefore = true
		t.c.stats.subscribes.Add(1)
		err := rdb.Receive(ctx, t.c.subscribeCmd(q.channel), func(m rueidis.PubSubMessage) {
			t.heard(q)
			if m.Message == wakeAllMessage {
				t.wakeAll(q)
			} else {
				t.wakeOne(q)
			}
		})
		close(ended)
		if counted.Load() {
			t.c.stats.channels.Add(-1)
		}
		if err == nil {
			// Unsubscribed: by us (stop is closed and the loop ends), or by someone else.
			continue
		}
		t.refused.add(err)
		select {
		case <-q.stop:
			return
		case <-t.c.ctx.Done():
			return
		case <-time.After(backoff):
		}
		if backoff < time.Second {
			backoff *= 2
		}
	}
}

// finish marks q's subscription as gone, so a new queue for its channel may subscribe.
func (t *waitTable) finish(q *waitQueue) {
	t.mu.Lock()
	if t.closing[q.channel] == q {
		delete(t.closing, q.channel)
	}
	t.mu.Unlock()
	close(q.done)
}

// mark returns how many unlock messages q has received so far: a release sent after it reads
// it will, if q's subscription is counted, add exactly one (its own PUBLISH). Nil q: 0.
func (t *waitTable) mark(q *waitQueue) uint64 {
	if q == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return q.msgs
}

// heard counts one unlock message on q and ends the hold-backs it completes.
func (t *waitTable) heard(q *waitQueue) {
	t.mu.Lock()
	q.msgs++
	kept := q.watching[:0]
	for _, w := range q.watching {
		if q.msgs >= w.until {
			w.w.wake <- struct{}{}
		} else {
			kept = append(kept, w)
		}
	}
	clear(q.watching[len(kept):])
	q.watching = kept
	t.mu.Unlock()
}

// holdBack sleeps d, or less: it ends early once q has received two unlock messages since
// mark (see mark) — the release that mark preceded, and a release by somebody else, who must
// have taken the lock meanwhile: the outside waiter the hold-back was for has had its turn and
// given the lock back. It reports whether it saw that second message (foreign), and returns
// early without it when done1 or done2 close. A nil q sleeps d.
func (t *waitTable) holdBack(q *waitQueue, mark uint64, d time.Duration, done1, done2 <-chan struct{}) (foreign bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	if q == nil {
		select {
		case <-timer.C:
		case <-done1:
		case <-done2:
		}
		return false
	}
	until := mark + 2
	t.mu.Lock()
	if q.msgs >= until {
		t.mu.Unlock()
		return true
	}
	w := waiterPool.Get().(*waiter)
	q.watching = append(q.watching, watch{until: until, w: w})
	t.mu.Unlock()
	woken := false
	select {
	case <-w.wake:
		woken = true
	case <-timer.C:
	case <-done1:
	case <-done2:
	}
	t.mu.Lock()
	if !woken {
		if i := slices.IndexFunc(q.watching, func(x watch) bool { return x.w == w }); i >= 0 {
			q.watching = slices.Delete(q.watching, i, i+1)
		} else {
			// Ended by a message that raced with the timer: take its wake-up.
			<-w.wake
			woken = true
		}
	}
	foreign = woken || q.msgs >= until
	t.mu.Unlock()
	waiterPool.Put(w)
	return foreign
}
