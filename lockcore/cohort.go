package lockcore

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Local waiter queue and bounded hand-over (lock cohorting) for Mutex.
//
// Goroutines of one Client that want the same Mutex queue here in arrival order, and at most one
// of them has an attempt in flight in Redis at a time: the first to arrive acquires through Redis
// as usual (the "attempt"), the others wait in the queue. When the holder releases and a local
// waiter is queued, the lock passes to that waiter:
//
//   - inside the process, with no Redis round trip (a hand-over), while the number of
//     consecutive hand-overs is below Options.HandoffLimit, the lock has been in the process for
//     less than Options.HandoffWindow, and its lease is safely ahead (see leaseSafe). The hash
//     field in Redis stays the one the Client wrote when it took the lock through Redis; the
//     local hold table maps the lock to the new local owner, which reenters and unlocks through
//     that field (see lockcore/doc.go, Owner identity);
//   - otherwise through Redis, by passScript: one script call releases the lock exactly as
//     unlockScript does (DEL and PUBLISH) and, if nobody else is subscribed to the unlock channel,
//     takes it at once for the waiter; if somebody is, the lock is left free and the waiter
//     holds back before its own attempt, so that the other process or Redisson client that
//     heard the release gets its turn: Options.HandoffYield, doubled after each turn the
//     outside waiter missed (see outside.go).
//
// A goroutine that releases and asks again queues behind the local waiters instead of barging.

// cohort is the local state of one Mutex name while goroutines of this Client use it. It lives
// in the name's hold shard and is guarded by its mutex, so that a hand-over changes the hold
// record and the cohort under one lock.
type cohort struct {
	// holder is the local owner that holds the lock through this cohort; zero when none does
	// (nobody holds it, or the one in busy is still acquiring).
	holder Owner
	// busy is true while a local goroutine acquires the lock through Redis or holds it: every
	// other local acquisition queues.
	busy bool
	// queue is the local waiters in arrival order.
	queue []*localWaiter
	// handoffs counts the in-process hand-overs since the lock last went through Redis
	// (Options.HandoffLimit bounds it; then a release passes through Redis). since is when the
	// lock was last taken while free in Redis (Client.now): a chain of hand-overs and passes
	// lasts at most Options.HandoffWindow from it, and ends with a release that leaves the lock
	// free.
	handoffs int
	since    int64
	// outside counts the releases heard outside this Client in a row whose hold-back still
	// found the lock free: the hold-back for the next is HandoffYield << outside (outside.go).
	outside int
	// holdBack is how long the waiter given turnYield holds back; heard says whether it holds
	// back for a waiter outside that heard the release (else for pollers, see outside.go).
	holdBack time.Duration
	heard    bool
	// polled is when a chain's end last held back for pollers, or the cohort was made
	// (Client.now).
	polled int64
	// sub is this Client's subscription to the lock's unlock channel, held from the first
	// attempt that found the lock held by somebody else until the cohort goes idle (see
	// contended and outside.go: a Client whose goroutines wait for a lock is a waiter other
	// Clients must hear).
	sub *waitQueue
	// relMark is sub's message count read before the last release through Redis was sent
	// (waitTable.mark): the hold-back after it ends early on a release by somebody else.
	relMark uint64
}

// turn is what a queued waiter is told.
type turn uint8

const (
	// turnHanded: the lock is the waiter's; it was handed over in the process or passed to it
	// by passScript, and the hold table records it.
	turnHanded turn = iota + 1
	// turnAttempt: the waiter is now the one local goroutine that acquires through Redis.
	turnAttempt
	// turnYield is turnAttempt after a release that left the lock free for others: hold back
	// first.
	turnYield
)

// localWaiter is one goroutine queued for a lock. wake has room for one turn, so a releaser
// never blocks on it.
type localWaiter struct {
	owner Owner
	la    leaseArgs
	wake  chan turn
	// check is when to look whether the holder let the lock go without unlocking (see reclaim),
	// set by enter; timer is the waiter's own, kept across uses of the pooled waiter.
	check time.Duration
	timer *time.Timer
	// abandoned is set, under the shard's mutex, when the waiter gave up while a releaser had
	// it reserved (popped for a pass, its turn not yet given): whoever gives the turn passes it
	// on instead, and the waiter returns at once rather than wait for a reply.
	abandoned bool
}

var localWaiterPool = sync.Pool{New: func() any { return &localWaiter{wake: make(chan turn, 1)} }}

// entry is how an acquisition begins when the local queue is on.
type entry uint8

const (
	// entryReentry: the owner holds the lock already; go to Redis with the hold's field.
	entryReentry entry = iota + 1
	// entryAttempt: the owner is the one local goroutine acquiring through Redis.
	entryAttempt
	// entryBusy: the caller asked not to wait, and another local owner holds the lock or is
	// acquiring it.
	entryBusy
	// entryQueued: the owner waits for its turn in the returned waiter.
	entryQueued
)

// enter starts owner's acquisition of name. With noWait it never queues.
func (c *Client) enter(name string, owner Owner, la leaseArgs, noWait bool) (entry, string, *localWaiter) {
	s := c.holds.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.m[name]; h != nil && h.owner == owner {
		return entryReentry, h.field, nil
	}
	e := s.co[name]
	if e == nil {
		e = cohortPool.Get().(*cohort)
		// The poller window comes after pollerEvery of contention, not at a new cohort's
		// first chain: on many keys cohorts come and go, and each would stall 60 ms.
		e.polled = c.now()
		s.co[name] = e
	}
	if !e.busy || e.holder == owner {
		// The latter: owner's hold was lost (its lease ran out or its renewal found the lock
		// gone) and it asks again; it starts over through Redis rather than queue behind itself.
		e.busy, e.holder = true, Owner{}
		return entryAttempt, "", nil
	}
	if noWait {
		return entryBusy, "", nil
	}
	w := localWaiterPool.Get().(*localWaiter)
	w.owner, w.la = owner, la
	w.check = c.checkAfterLocked(s, name)
	e.queue = append(e.queue, w)
	return entryQueued, "", w
}

// contended is called when the acquisition of name that this Client's cohort makes through
// Redis finds the lock held by somebody else, before it waits: from then until the cohort goes
// idle, the cohort holds the lock's subscription (cohort.sub, see outside.go), so that the
// other holder's releases hear this Client waiting even while its goroutines wait in the local
// queue or in a hold-back. Contention between this Client's own goroutines alone subscribes
// nothing: the hand-over serves it without Redis.
func (c *Client) contended(name string) {
	s := c.holds.shard(name)
	s.mu.Lock()
	if e := s.co[name]; e != nil && e.sub == nil {
		e.sub = c.waiters.join(channelName(name))
	}
	s.mu.Unlock()
}

// awaitTurn waits until w is given its turn, ctx ends, the Client closes or deadline (if not
// zero) passes. On giving up it leaves the queue; if a turn was already on its way it takes it:
// a handed lock is kept (the caller holds it, as when a Redis grant races with ctx) and an
// attempt is passed on. It returns turnHanded or turnAttempt/turnYield, or 0 with the reason
// (nil when deadline passed).
func (c *Client) awaitTurn(ctx context.Context, name string, w *localWaiter, deadline time.Time) (turn, error) {
	arm := func(d time.Duration) {
		if !deadline.IsZero() {
			d = min(d, time.Until(deadline))
		}
		d = max(d, time.Millisecond)
		if w.timer == nil {
			w.timer = time.NewTimer(d)
		} else {
			w.timer.Reset(d)
		}
	}
	arm(w.check)
	var reason error
	for {
		select {
		case t := <-w.wake:
			w.timer.Stop()
			localWaiterPool.Put(w)
			return t, nil
		case <-ctx.Done():
			reason = ctx.Err()
		case <-c.ctx.Done():
			reason = ErrClosed
		case <-w.timer.C:
			if deadline.IsZero() || time.Now().Before(deadline) {
				arm(c.reclaim(name))
				continue
			}
		}
		break
	}
	t, how := c.leave(name, w)
	switch how {
	case leftAbandoned:
		// A releaser holds it reserved and will pass its turn on: not back to the pool.
		return 0, reason
	case leftQueue:
		w.timer.Stop()
		localWaiterPool.Put(w)
		return 0, reason
	}
	w.timer.Stop()
	localWaiterPool.Put(w)
	if t == turnHanded {
		// The lock is the caller's already, as when a Redis grant races with ctx.
		return t, nil
	}
	c.passTurn(name)
	return 0, reason
}

// checkAfterLocked is how long a queued waiter of name sleeps before it checks whether the
// local holder has let its lease run out without unlocking (see reclaim). The shard's mutex is
// held.
func (c *Client) checkAfterLocked(s *holdShard, name string) time.Duration {
	h := s.m[name]
	switch {
	case h == nil:
		// Nobody holds it yet (the attempt is in flight) or the record is gone.
		return c.opt.RetryFloor
	case h.watchdog:
		return c.opt.RenewInterval
	}
	return max(time.Duration(h.lease-(c.now()-h.lastSet)), 0) + time.Millisecond
}

// reclaim gives the turn to the head of name's queue when the local holder no longer holds the
// lock without having unlocked: its explicit lease ran out (a lock left to expire, as Redisson
// allows) or the watchdog found the lock gone. Without it, local waiters would wait for an
// Unlock that may never come while the lock is free in Redis.
//
// It returns when to check again.
func (c *Client) reclaim(name string) time.Duration {
	s := c.holds.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.co[name]
	if e != nil && !e.holder.IsZero() {
		h := s.m[name]
		if h == nil || h.owner != e.holder || (!h.watchdog && c.now()-h.lastSet > h.lease && c.now() > h.expires) {
			e.holder = Owner{}
			c.nextLocked(s, name, e, turnAttempt)
		}
	}
	return c.checkAfterLocked(s, name)
}

// How a waiter that gives up leaves (see leave).
type leaving uint8

const (
	leftQueue     leaving = iota + 1 // it was still queued
	leftTurn                         // its turn had been given: leave returns it
	leftAbandoned                    // a releaser holds it reserved: marked abandoned
)

// leave takes w out of name's queue. If a releaser popped it first, it returns the turn that
// was given, or, when none was yet (w is reserved for a release in flight), marks w abandoned
// so that the turn goes to the next waiter when the release settles. Every turn is given under
// the shard's mutex, so the three cases cannot race.
func (c *Client) leave(name string, w *localWaiter) (turn, leaving) {
	s := c.holds.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.co[name]; e != nil {
		for i, q := range e.queue {
			if q == w {
				copy(e.queue[i:], e.queue[i+1:])
				e.queue[len(e.queue)-1] = nil
				e.queue = e.queue[:len(e.queue)-1]
				return 0, leftQueue
			}
		}
	}
	select {
	case t := <-w.wake:
		return t, leftTurn
	default:
	}
	w.abandoned = true
	return 0, leftAbandoned
}

// holding records that owner, the local goroutine that was acquiring name through Redis, now
// holds it: hand-overs count from here.
func (c *Client) holding(name string, owner Owner) {
	s := c.holds.shard(name)
	s.mu.Lock()
	if e := s.co[name]; e != nil {
		e.holder, e.handoffs, e.since = owner, 0, c.now()
	}
	s.mu.Unlock()
}

// passTurn is called by the local goroutine that was acquiring name through Redis and gave up
// (or failed): the next local waiter gets the attempt, or the cohort goes idle.
func (c *Client) passTurn(name string) {
	s := c.holds.shard(name)
	s.mu.Lock()
	if e := s.co[name]; e != nil {
		c.nextLocked(s, name, e, turnAttempt)
	}
	s.mu.Unlock()
}

// nextLocked gives the attempt to the head of e's queue with t, or, with nobody queued, marks
// the cohort idle and forgets it. The shard's mutex is held.
func (c *Client) nextLocked(s *holdShard, name string, e *cohort, t turn) {
	if w := e.popLocked(); w != nil {
		w.wake <- t
		return
	}
	e.busy, e.holder = false, Owner{}
	delete(s.co, name)
	if e.sub != nil {
		c.waiters.leave(e.sub)
		e.sub = nil
	}
	// Nothing refers to an idle cohort once it leaves the map: every other reference is made
	// under the shard's mutex, through the map.
	e.handoffs, e.since = 0, 0
	e.outside, e.holdBack, e.heard, e.polled = 0, 0, false, 0
	cohortPool.Put(e)
}

// cohortPool recycles cohorts: on many keys nearly every acquisition makes one and its release
// drops it.
var cohortPool = sync.Pool{New: func() any { return &cohort{} }}

// popLocked takes the head of the queue, or nil.
func (e *cohort) popLocked() *localWaiter {
	if len(e.queue) == 0 {
		return nil
	}
	w := e.queue[0]
	copy(e.queue, e.queue[1:])
	e.queue[len(e.queue)-1] = nil
	e.queue = e.queue[:len(e.queue)-1]
	return w
}

// release is how an Unlock goes on after startRelease.
type release struct {
	handed   bool         // handed over inside the process: Unlock is done
	h        *hold        // the record to settle, nil if none
	field    string       // the hash field to release
	leaseArg string       // the lease to set again on a partial release ("" for the Client's)
	next     *localWaiter // reserved: passScript grants it, or, with free, it yields and attempts
	// nextField is the hash field passScript grants next with (Client.fieldOf).
	nextField string
	// free: the chain is over, so the release leaves the lock free in Redis (unlockScript,
	// whoever listens) and next holds back before its attempt.
	free bool
}

// startRelease begins owner's unlock of name under one lock of the shard: ok is false when
// another local owner holds the lock. With the local queue (local), a last hold passes to the
// next local waiter inside the process if the bounds allow (handOver), or that waiter is reserved
// for passScript.
func (c *Client) startRelease(name string, owner Owner, local bool) (r release, ok bool) {
	s := c.holds.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.m[name]
	if h == nil {
		r.field = c.fieldOfLocked(s, name, owner)
	} else if h.owner != owner {
		return r, false
	} else {
		r.h, r.field, r.leaseArg = h, h.field, h.leaseArg
	}
	if !local || (h != nil && h.count > 1) {
		return r, true
	}
	e := s.co[name]
	if e == nil || e.holder != owner || len(e.queue) == 0 {
		return r, true
	}
	now := c.now()
	if c.chainOver(e, now) {
		r.free = true
	} else if h != nil && c.handOver(e, h, now) {
		r.handed = true
		return r, true
	}
	r.next = e.popLocked()
	r.nextField = c.fieldOfLocked(s, name, r.next.owner)
	e.relMark = c.waiters.mark(e.sub)
	return r, true
}

// chainOver reports whether e's chain of grants inside this Client has lasted
// Options.HandoffWindow since the lock was last free in Redis, so that the next release must
// leave the lock free. Without that gap a poller (a Redisson tryLock with no wait, a lockcore
// TryLock), or a waiter whose subscription is not up yet, never finds the lock free: a pass
// through Redis re-grants it in the same script that released it.
func (c *Client) chainOver(e *cohort, now int64) bool {
	return now-e.since >= int64(c.opt.HandoffWindow)
}

// handOver passes the lock of e, held as h by e.holder with its last hold, to the next local
// waiter inside the process, if fewer than Options.HandoffLimit hand-overs happened in a row and
// the lease allows it (the chain's window is checked before). It reports whether it did. The
// shard's mutex is held.
func (c *Client) handOver(e *cohort, h *hold, now int64) bool {
	w := e.queue[0]
	if c.opt.HandoffLimit < 0 || e.handoffs >= c.opt.HandoffLimit || !c.leaseSafe(h, w.la, now) {
		return false
	}
	e.popLocked()
	h.owner = w.owner
	if !w.la.watchdog {
		// Partial unlocks and reentry send the lease the new owner asked for; the table's
		// record of it must say the same, or it would trust a lease Redis no longer has after
		// the next PEXPIRE. The confirmed lease (expires) stays: Redis has not changed.
		h.leaseArg, h.lease = w.la.arg, int64(w.la.d)
		h.lastSet = now
	}
	e.holder = w.owner
	e.handoffs++
	c.stats.handoffs.Add(1)
	w.wake <- turnHanded
	return true
}

// handoffLeaseMargin is the lease an explicit-lease hand-over keeps in hand beyond the new
// owner's whole lease, on top of the drift allowance.
const handoffLeaseMargin = 5 * time.Millisecond

// leaseDrift is how much earlier than the confirmed lease says a lock may expire in Redis: the
// two clocks' rates differ (Redis expires by its own clock). As RedLock allows it: 1% of the
// lease plus 2 ms.
func leaseDrift(lease int64) int64 { return lease/100 + int64(2*time.Millisecond) }

// leaseSafe reports whether h may be handed to a waiter that asked for la. It trusts only the
// confirmed lease (hold.expires: the send time of the last call whose reply confirmed the lease,
// plus that lease), less the drift allowance, so a Client cut off from Redis, whose renewals
// fail or whose replies are lost, stops handing over as soon as that lease is no longer
// comfortably ahead, whatever it sent. The lock must stay held in Redis at least as long as
// the waiter would hold it had it taken the lock itself: a watchdog hold qualifies while at
// least half its lease is confirmed ahead (a healthy one is renewed every RenewInterval, a third
// of the lease by default, so three quarters or more stay ahead); an explicit-lease hold only
// if what is confirmed covers the waiter's whole lease. The two kinds never pass to each other.
func (c *Client) leaseSafe(h *hold, la leaseArgs, now int64) bool {
	if h.watchdog != la.watchdog || h.unsure {
		return false
	}
	left := h.expires - now - leaseDrift(h.lease)
	if h.watchdog {
		return left >= h.lease/2
	}
	return left >= int64(la.d+handoffLeaseMargin)
}

// release outcomes of a last-hold unlock, for settle.
type releaseOutcome uint8

const (
	// releasedGone: the lock is no longer owner's in Redis (released, or not held at all), or
	// what happened is unknown and left to the doubt resolver (doubt.go).
	releasedGone releaseOutcome = iota + 1
	// releasedHeard: released and left free for others outside this Client, who were
	// subscribed to hear it.
	releasedHeard
	// releasedFree: released and left free because the chain was over (release.free), heard
	// by nobody outside this Client.
	releasedFree
	// releasedPassed: released and taken for the reserved waiter in the same script.
	releasedPassed
	// releasedPartial: Redis still counts holds of the field; the lock stays owner's.
	releasedPartial
)

// settle updates the hold table and the cohort after owner's unlock of name, whose record was h
// (nil if none), had outcome, with w reserved (or nil) for a grant with wfield; the unlock was
// sent at sent. It gives w
// its turn, or, if w gave up meanwhile, the next waiter. It returns the waiter whose grant by
// passScript nobody may count on (it gave up, or the reply came back after its lease): the
// caller releases that grant, once, with unlockScript. A plain release is right even if the
// waiter takes the lock again meanwhile (it re-enters its own field): the count goes 2, then 1,
// matching the one hold the table records for it.
func (c *Client) settle(name string, owner Owner, h *hold, w *localWaiter, wfield string, outcome releaseOutcome, sent int64) (orphan *localWaiter) {
	s := c.holds.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := c.now()
	switch outcome {
	case releasedPartial:
		if h != nil && s.m[name] == h && h.count > 1 {
			h.count--
			h.lastSet = sent
			h.setLease(sent, time.Duration(h.lease))
		}
	default:
		if h != nil && s.m[name] == h {
			delete(s.m, name)
		}
	}
	if w != nil && outcome == releasedPassed && (w.abandoned || now-sent >= int64(w.la.d)-leaseDrift(int64(w.la.d))) {
		// Granted to a waiter that is gone, or with its lease (nearly) over by the time the
		// reply came: nobody may count on that grant. The caller releases it; until then
		// whoever attempts next waits in Redis like any other contender.
		orphan = w
		outcome = releasedGone
	}
	if w != nil && w.abandoned {
		// It gave up while reserved: its turn goes to the next waiter.
		w = nil
	}
	e := s.co[name]
	if e == nil || e.holder != owner {
		// Not this cohort's holder: its hold was reclaimed during the release's round trip (its
		// lease ran out and a queued waiter's check passed the turn on), or it took the lock on
		// a path without the queue. A waiter reserved before the reclaim was popped from the
		// queue and nobody else will give it a turn: it goes back to the head of the queue
		// (it still watches its context there: it has not given up, or it would be abandoned),
		// or, with the cohort gone, starts a new one as its attempt.
		switch {
		case w == nil:
		case outcome == releasedPassed:
			// The script already took the lock for w in Redis: w holds it, whoever the
			// cohort's turn went to (that one waits in Redis like any other contender). Sent
			// back to the queue, w would later take it again on top (a count of 2 in Redis
			// against 1 here) and its Unlock would leave the lock held until the lease ran out.
			s.m[name] = newHold(w.owner, wfield, w.la.arg, w.la.d, w.la.watchdog, sent)
			if e == nil {
				e = cohortPool.Get().(*cohort)
				e.busy = true
				s.co[name] = e
				e.holder, e.handoffs, e.since, e.polled = w.owner, 0, now, now
			}
			c.stats.passes.Add(1)
			w.wake <- turnHanded
		case e == nil:
			e = cohortPool.Get().(*cohort)
			e.busy, e.polled = true, now
			s.co[name] = e
			w.wake <- turnAttempt
		default:
			e.queue = slices.Insert(e.queue, 0, w)
		}
		return orphan
	}
	switch outcome {
	case releasedPartial:
		if w != nil {
			// Redis counted more holds than the table (see Unlock: the excess is cleared).
			// The reserved waiter attempts, and waits in Redis like any other contender.
			e.holder = Owner{}
			w.wake <- turnAttempt
		}
		return orphan
	case releasedPassed:
		// The chain goes on (a pass is a grant inside it, the lock never free in Redis); the
		// hand-overs in a row start again from this trip through Redis. The hold-back for
		// outside waiters stays: a pass may also come from this Client's own subscription
		// being counted while it is still being set up (waitTable.own errs towards it), with
		// an outside waiter there; only a chain's end heard by nobody outside starts it over.
		s.m[name] = newHold(w.owner, wfield, w.la.arg, w.la.d, w.la.watchdog, sent)
		e.holder = w.owner
		e.handoffs = 0
		c.stats.passes.Add(1)
		w.wake <- turnHanded
		return orphan
	}
	e.holder = Owner{}
	t := turnAttempt
	switch {
	case c.opt.HandoffYield <= 0:
	case outcome == releasedHeard:
		t, e.holdBack, e.heard = turnYield, c.opt.HandoffYield<<e.outside, true
	case outcome == releasedFree:
		e.outside = 0
		if now-e.polled >= int64(pollerEvery) {
			t, e.holdBack, e.heard = turnYield, pollerYieldChains*c.opt.HandoffWindow, false
			e.polled = now
		}
	}
	if t == turnYield {
		c.stats.yields.Add(1)
	}
	if w != nil {
		w.wake <- t
		return orphan
	}
	// Nobody was reserved (or it gave up): the next waiter, if any, goes on.
	c.nextLocked(s, name, e, t)
	return orphan
}

// holdBackFor is how long the waiter given turnYield on name holds back (see outside.go), and
// the subscription and message mark that may end it early (see waitTable.holdBack).
func (c *Client) holdBackFor(name string) (time.Duration, *waitQueue, uint64) {
	s := c.holds.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.co[name]; e != nil {
		d := e.holdBack
		if d <= 0 {
			d = c.opt.HandoffYield
		}
		return d, e.sub, e.relMark
	}
	return c.opt.HandoffYield, nil, 0
}

// heldBack tells name's cohort how the first attempt after a hold-back went: granted means the
// lock was still free, so an outside waiter that heard the release did not make it in time and
// the next hold-back for one doubles (up to maxOutsideShift); refused means someone outside
// took it, and the hold-back stays. granted is false also when the hold-back ended on a release
// by somebody else (the outside waiter made it in time, held the lock and let it go).
func (c *Client) heldBack(name string, granted bool) {
	s := c.holds.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.co[name]; e != nil && granted && e.heard && e.outside < maxOutsideShift {
		e.outside++
	}
}
