package lockcore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"
)

// Mutex is a reentrant lock with Redisson's RLock protocol. It is a cheap handle: make one per
// use or keep it; it is safe for concurrent use by different Owners.
type Mutex struct {
	c    *Client
	name string
	// local: acquisitions go through the Client's local waiter queue and releases may hand the
	// lock over (cohort.go). Off for the NoLocalQueue knob and for the Mutex inside other lock
	// kinds, whose grants need Redis (a fencing token per grant, a RedLock quorum).
	local bool
}

// Mutex returns the reentrant lock stored at key name. It allocates nothing but the handle (the
// unlock channel's name is built where it is needed), and a caller that keeps a copy of *m, or
// lets the handle stay on its stack, makes a lock+unlock cycle's allocations lockcore's own.
func (c *Client) Mutex(name string) *Mutex {
	return &Mutex{c: c, name: name, local: !c.opt.knobs.NoLocalQueue}
}

// redisMutex returns the lock at key name without the local queue: every acquisition and
// release goes through Redis, for lock kinds built on Mutex whose grants must (a fenced lock's
// token, a RedLock's per-master attempts).
func (c *Client) redisMutex(name string) *Mutex {
	return &Mutex{c: c, name: name}
}

// Name returns the lock's key.
func (m *Mutex) Name() string { return m.name }

// Lock blocks until owner holds the lock or ctx ends. The lock is taken with the Client's
// LeaseTime and renewed by the watchdog until Unlock. Taking it again while holding it counts up.
func (m *Mutex) Lock(ctx context.Context, owner Owner) error {
	_, err := m.acquire(ctx, owner, -1, 0)
	return err
}

// LockLease blocks until owner holds the lock or ctx ends. The lock expires after lease unless
// released earlier; it is not renewed.
func (m *Mutex) LockLease(ctx context.Context, owner Owner, lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("lockcore: lease %v must be positive", lease)
	}
	_, err := m.acquire(ctx, owner, -1, lease)
	return err
}

// TryLock tries to take the lock for up to wait (0: one attempt, no waiting). A lease of 0 means
// the Client's LeaseTime with watchdog renewal; a positive lease expires and is not renewed.
// It reports whether owner holds the lock; running out of wait is not an error.
func (m *Mutex) TryLock(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	if wait < 0 || lease < 0 {
		return false, fmt.Errorf("lockcore: wait %v and lease %v must not be negative", wait, lease)
	}
	return m.acquire(ctx, owner, wait, lease)
}

// acquire takes the lock, waiting up to wait (negative: until ctx ends). A grant that comes as
// the Client closes (through Redis, racing with Close) is no hold the caller may count on: nothing
// renews it any more. It is dropped from the table, left to run out with its lease in Redis as
// Close leaves every lock, and the caller gets ErrClosed.
func (m *Mutex) acquire(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	ok, err := m.take(ctx, owner, wait, lease)
	if ok && m.c.closed.Load() {
		m.c.holds.dropOwner(m.name, owner)
		return false, ErrClosed
	}
	return ok, err
}

// take is acquire up to the grant.
func (m *Mutex) take(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	c := m.c
	la, err := c.begin(ctx, owner, lease)
	if err != nil {
		return false, err
	}
	if !m.local {
		return m.acquireRedis(ctx, owner, "", la, wait, holdBack{})
	}
	var deadline time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
	}
	kind, field, w := c.enter(m.name, owner, la, wait == 0)
	switch kind {
	case entryReentry:
		// Through the hold's field, which is not owner's own when the lock was handed over.
		return m.acquireRedis(ctx, owner, field, la, wait, holdBack{})
	case entryBusy:
		// Another local owner holds the lock or is acquiring it: Redis would say taken.
		return false, nil
	case entryQueued:
		t, err := c.awaitTurn(ctx, m.name, w, deadline)
		if t != 0 && c.closed.Load() {
			return false, c.turnAfterClose(m.name, owner, t)
		}
		switch t {
		case turnHanded:
			return true, nil
		case 0:
			return false, err
		}
		var hb holdBack
		if t == turnYield {
			hb.d, hb.q, hb.mark = c.holdBackFor(m.name)
		}
		if wait > 0 {
			if wait = time.Until(deadline); wait <= 0 {
				c.passTurn(m.name)
				return false, nil
			}
		}
		return m.attempt(ctx, owner, la, wait, hb)
	}
	return m.attempt(ctx, owner, la, wait, holdBack{})
}

// turnAfterClose settles turn t given to owner's queued acquisition of name as the Client
// closed, and returns ErrClosed, as every acquisition on a closed Client does: nothing renews a
// hold any more (the watchdog is gone), so the caller must not count on one. A handed lock is
// dropped from the table and left to run out with its lease in Redis (Close releases nothing); an
// attempt's turn passes on.
func (c *Client) turnAfterClose(name string, owner Owner, t turn) error {
	if t == turnHanded {
		c.holds.dropOwner(name, owner)
	} else {
		c.passTurn(name)
	}
	return ErrClosed
}

// attempt acquires through Redis as the one local goroutine doing so, and tells the local queue
// how it went: a holder to hand over from, or the next waiter's turn to attempt.
func (m *Mutex) attempt(ctx context.Context, owner Owner, la leaseArgs, wait time.Duration, hb holdBack) (bool, error) {
	ok, err := false, ctx.Err()
	if err == nil {
		ok, err = m.acquireRedis(ctx, owner, "", la, wait, hb)
	}
	if ok {
		m.c.holding(m.name, owner)
	} else {
		m.c.passTurn(m.name)
	}
	return ok, err
}

// holdBack is how long a waiter given turnYield holds back before its first attempt, and what
// may end it early (see waitTable.holdBack); zero: no hold-back.
type holdBack struct {
	d    time.Duration
	q    *waitQueue
	mark uint64
}

// acquireRedis takes the lock through Redis with field, waiting up to wait (negative: until ctx
// ends). With hb it holds back first (see turnYield).
func (m *Mutex) acquireRedis(ctx context.Context, owner Owner, field string, la leaseArgs, wait time.Duration, hb holdBack) (bool, error) {
	c := m.c
	foreign := false
	if hb.d > 0 {
		if wait > 0 {
			hb.d = min(hb.d, wait)
		}
		start := time.Now()
		foreign = c.waiters.holdBack(hb.q, hb.mark, hb.d, ctx.Done(), c.ctx.Done())
		if foreign {
			c.stats.cutShort.Add(1)
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if c.ctx.Err() != nil {
			return false, ErrClosed
		}
		if wait > 0 {
			// A wait that runs out during the hold-back still makes its one attempt.
			wait = max(wait-time.Since(start), 0)
		}
	}
	ttl, err := m.try(ctx, owner, field, la)
	if hb.d > 0 {
		c.heldBack(m.name, err == nil && ttl < 0 && !foreign)
	}
	if err != nil || ttl < 0 || wait == 0 {
		return err == nil && ttl < 0, err
	}
	if m.local {
		c.contended(m.name)
	}
	return c.await(ctx, channelName(m.name), wait, ttl, func() (int64, error) {
		return m.try(ctx, owner, field, la)
	})
}

// try runs the lock script once with field, or, for a first hold (field ""), with the field
// the owner takes new holds of the lock with (Client.fieldOf), looked up at each attempt. It
// returns -1 when owner now holds the lock, otherwise the lock's remaining TTL in nanoseconds (0
// if it has none).
func (m *Mutex) try(ctx context.Context, owner Owner, field string, la leaseArgs) (int64, error) {
	c := m.c
	if field == "" {
		field = c.fieldOf(m.name, owner)
	}
	if ttl, refused := c.refuse(m.name, owner, field); refused {
		return ttl, nil
	}
	c.stats.attempts.Add(1)
	// Once sent, an attempt runs to its reply even if ctx ends meanwhile: a caller that gave up
	// must still learn whether it got the lock, or the lock would be left held with nobody to
	// release it. rueidis' connection timeouts bound the wait on a dead server. Only a wait in
	// the batch queue, before anything is sent, ends with ctx.
	sent := c.now()
	c.holds.leaseMaySet(m.name, owner, sent, la.d)
	pttl, err := c.run(ctx, opLock, m.name, la.arg, field)
	if se, ok := errors.AsType[*SyncError](err); ok {
		if !se.granted() {
			// A refusal wrote nothing: no replica needs to have seen it.
			pttl, err = se.reply.AsInt64()
		} else {
			c.stats.failed.Add(1)
			c.undoGrant(ctx, m.name, field, la.arg)
			return 0, fmt.Errorf("lockcore: lock %q: %w", m.name, err)
		}
	}
	if err != nil {
		if rueidis.IsRedisNil(err) {
			if c.grantedLate(ctx, m.name, field, la, sent) {
				return 1, nil
			}
			c.holds.acquiredField(m.name, owner, field, la.arg, la.d, la.watchdog, sent)
			return -1, nil
		}
		c.attemptFailed(m.name, field, err)
		return 0, fmt.Errorf("lockcore: lock %q: %w", m.name, err)
	}
	c.stats.failed.Add(1)
	switch {
	case pttl > 0:
		return pttl * int64(time.Millisecond), nil
	case pttl == -2:
		// Expired between the script's checks and PTTL; retry at once.
		return 1, nil
	default:
		return 0, nil
	}
}

// refuse reports whether an attempt by owner with field on name must not be sent, and the TTL
// to wait before the next: while the field is lent to another local owner by a hand-over
// (holdTable.lent), which holds the lock. Every lock kind on the Redisson hash asks it first.
func (c *Client) refuse(name string, owner Owner, field string) (int64, bool) {
	if c.holds.lent(name, owner, field) {
		c.stats.refused.Add(1)
		c.stats.failed.Add(1)
		return int64(c.opt.RetryFloor), true
	}
	return 0, false
}

// attemptFailed settles an attempt with field on name that got no answer: if no hold of the
// table counts on the field, it may have been granted in Redis with nobody to release it, so the
// field goes in doubt. A re-entry's field is counted by its hold (see doubt.go), whose lease is
// then unsure: the attempt may still run and set its own.
func (c *Client) attemptFailed(name, field string, err error) {
	if unknownOutcome(err) && !c.holds.markUnsure(name, field) {
		c.doubt(name, field)
	}
}

// grantedLate reports whether a grant of field on name, sent at sent with lease la, came back
// with its lease (nearly) over: as RedLock counts validity, a grant is worth nothing once the
// lease less the time it took and the drift allowance is gone, and a caller told "held" then
// could share the lock with the next holder. A first hold is then released and the attempt
// counts as failed; a re-entry is left as granted, since the hold it re-enters stands or falls
// with the same lease.
func (c *Client) grantedLate(ctx context.Context, name, field string, la leaseArgs, sent int64) bool {
	if c.now()-sent < int64(la.d)-leaseDrift(int64(la.d)) || c.holds.counts(name, field) {
		return false
	}
	c.stats.failed.Add(1)
	c.releaseGrant(ctx, name, field, la.arg)
	return true
}

// releaseGrant releases one grant of field on name that no hold counts on (it came too late, or
// its waiter gave up), as an unlock: one hold less, so a re-entry by the field's owner racing
// with it keeps its own. If the answer is lost, the field goes in doubt.
func (c *Client) releaseGrant(ctx context.Context, name, field, leaseArg string) {
	if _, err := c.run(detach(ctx), opUnlock, name, leaseArg, field); unknownOutcome(err) {
		c.doubt(name, field)
	}
}

// undoGrant releases a grant of field on name whose replicas did not all acknowledge it (see
// sync.go): no caller may count on it, since a fail-over may lose it and grant the lock to
// another. As releaseGrant, one hold less: a re-entry's undo leaves the hold it re-entered as
// the table counts it. If the undo's own outcome is unknown (no answer, or not synced either),
// a first hold's field goes in doubt, and a re-entered hold is unsure (never handed over; its
// Unlock finds a surplus out, see doubt.go).
func (c *Client) undoGrant(ctx context.Context, name, field, leaseArg string) {
	if _, err := c.run(detach(ctx), opUnlock, name, leaseArg, field); unknownOutcome(err) {
		c.attemptFailed(name, field, err)
	}
}

// Unlock releases one hold of owner on the lock. When the count reaches zero the lock passes to
// a local waiter, if one is queued (see cohort.go), or the key is deleted and "0" is published on
// the unlock channel. It returns an error wrapping ErrNotOwner when owner does not hold the lock.
// When the release of an inner hold (owner held the lock more than once) fails, with no reply or
// an error reply, Unlock returns the error and the hold counts one less, as Redisson counts it:
// the outer hold stands, still renewed, and its own Unlock releases the lock for good.
func (m *Mutex) Unlock(ctx context.Context, owner Owner) error {
	if owner.IsZero() {
		return ErrNoOwner
	}
	c := m.c
	r, ok := c.startRelease(m.name, owner, m.local)
	if !ok {
		return fmt.Errorf("%w: %q is held by another owner of this client", ErrNotOwner, m.name)
	}
	if r.handed {
		return nil
	}
	h, field, leaseArg, w := r.h, r.field, r.leaseArg, r.next
	if leaseArg == "" {
		leaseArg = c.leaseArg
	}
	var n int64
	var err error
	sent := c.now()
	if w != nil {
		// A release that must leave the lock free (the chain is over) still asks PUBLISH who
		// heard it, with no waiter to grant to (3: nobody outside this Client).
		wfield, wlease := r.nextField, w.la.arg
		if r.free {
			wfield, wlease = "", ""
		}
		n, err = c.run(ctx, opPass, m.name, leaseArg, field, wfield, wlease, c.waiters.own(channelName(m.name)))
	} else {
		if h != nil {
			// An inner hold's release sets the lease again (PEXPIRE) if it runs.
			c.holds.leaseMaySet(m.name, owner, sent, time.Duration(h.lease))
		}
		n, err = c.run(ctx, opUnlock, m.name, leaseArg, field)
	}
	if se, ok := errors.AsType[*SyncError](err); ok && se.reply.IsNil() {
		// Not held: nothing was written for a replica to miss.
		err = rueidis.Nil
	}
	if err != nil && !rueidis.IsRedisNil(err) && c.holds.releaseFailed(m.name, h, unknownOutcome(err)) {
		// An inner hold's release failed (no waiter is reserved for one): the outer hold stands
		// and is still renewed. Putting the field in doubt here would have the resolver delete
		// a lock its owner still holds.
		return fmt.Errorf("lockcore: unlock %q: %w", m.name, err)
	}
	outcome := releasedGone
	// inDoubt is the fields to put in doubt: retired before settle gives anyone a turn, so
	// nobody attempts with them again, and handed to the resolver only once settle has dropped
	// the hold, as it leaves alone a field the table still counts a hold on (registered before,
	// the doubt was dropped and the lock left held for its lease: a loaded CI run saw it).
	var inDoubt [2]string
	switch {
	case err != nil && !isRedisReply(err):
		// It may or may not have run (and a pass may have granted w), or it was never sent and
		// the lock stays held for its lease with nobody to release it: the resolver clears
		// the fields.
		inDoubt[0] = field
		if w != nil && !r.free {
			inDoubt[1] = r.nextField
		}
	case err != nil:
	case n == 0:
		outcome = releasedPartial
		if h == nil || h.count <= 1 {
			// Redis counts more holds of the field than the table did (a re-entry or a pass
			// whose reply was lost, then taken again): nobody holds the rest, so the lock
			// would outlive every holder. Clear it.
			inDoubt[0] = field
			outcome = releasedGone
		}
	case n == 2:
		outcome = releasedPassed
	case n == 1 && w != nil:
		outcome = releasedHeard
	case n == 3 && w != nil:
		outcome = releasedFree
	}
	// Whatever the outcome of a failed call, stop renewing, as Redisson does: a lock whose
	// release failed must expire with its lease rather than be kept alive by this process.
	for _, f := range inDoubt {
		if f != "" {
			c.retire(m.name, f)
		}
	}
	if c.beforeSettle != nil {
		c.beforeSettle()
	}
	// The reserved waiter's lease, read while the waiter is still reserved: once settle has
	// given it its turn, it may return to the pool and another acquisition take it again.
	var wLease string
	if w != nil {
		wLease = w.la.arg
	}
	orphan := c.settle(m.name, owner, h, w, r.nextField, outcome, sent)
	for _, f := range inDoubt {
		if f != "" {
			c.resolveLater(m.name, f)
		}
	}
	if orphan != nil {
		c.releaseGrant(ctx, m.name, r.nextField, wLease)
	}
	if err != nil {
		if rueidis.IsRedisNil(err) {
			if h != nil {
				return fmt.Errorf("%w: the lease on %q ran out while held", ErrNotOwner, m.name)
			}
			return fmt.Errorf("%w: %q", ErrNotOwner, m.name)
		}
		return fmt.Errorf("lockcore: unlock %q: %w", m.name, err)
	}
	return nil
}

// HeldBy reports whether this Client's local table shows owner holding the lock, and how many
// times. It does not ask Redis.
func (m *Mutex) HeldBy(owner Owner) (int, bool) {
	s := m.c.holds.shard(m.name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.m[m.name]; h != nil && h.owner == owner {
		return h.count, true
	}
	return 0, false
}

// holdField returns the hash field under which Redis counts owner's holds of the lock, and
// whether this Client's local table shows owner holding it. After an in-process hand-over it is
// the field of the owner that took the lock through Redis, not owner.Field() (see Owner
// identity in the package doc): whoever reads the lock hash to check a hold must read this one.
// When owner holds no record it returns owner.Field() and false. It does not ask Redis.
// lockbench's referee reaches it through lockhooks.HoldField.
func (m *Mutex) holdField(owner Owner) (string, bool) {
	s := m.c.holds.shard(m.name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.m[m.name]; h != nil && h.owner == owner {
		return h.field, true
	}
	return m.c.fieldOfLocked(s, m.name, owner), false
}

// detach returns ctx without its cancellation, allocating only when ctx can be canceled.
func detach(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}
