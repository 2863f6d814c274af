package lockcore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// DefaultFairWaitTime is how long a fair lock's waiter may go without retrying before the others
// drop it from the queue as dead; each waiter's deadline is the one ahead of it plus this
// (Redisson's threadWaitTime).
const DefaultFairWaitTime = 5 * time.Second

// FairMutex is a reentrant lock that grants in arrival order, with Redisson's RedissonFairLock
// protocol: waiters queue in redisson_lock_queue:{name} with deadlines in
// redisson_lock_timeout:{name}, and a release wakes only the first of them, on its own channel
// redisson_lock__channel:{name}:<owner field>. Holding it is the same hash as a Mutex, renewed
// by the same watchdog. It is a cheap handle, safe for concurrent use by different Owners.
//
// Each waiting Owner subscribes to its own channel, as the protocol requires, so waiters of one
// Client do not share a subscription as Mutex waiters do; there is no herd to avoid, as each
// release wakes one waiter. A waiter whose process dies stays in the queue until its deadline
// passes and the next script on the lock drops it; until then nobody behind it is served.
// Deadlines are client wall-clock times in Unix ms, as Redisson writes them, so the clocks of all
// clients of a fair lock must agree to well within its wait time.
type FairMutex struct {
	c        *Client
	name     string
	queue    string
	timeouts string
	channel  string // the unlock channel; each waiter listens on channel + ":" + its field
	waitArg  string // the wait time in ms
}

// FairMutexOptions configure a FairMutex. The zero value of every field means its default.
type FairMutexOptions struct {
	// WaitTime is how long after the waiter ahead of it is due a waiter is presumed dead and
	// dropped from the queue (Redisson's threadWaitTime). All clients of one lock should use the
	// same wait time, as deadlines are shifted by it. Default DefaultFairWaitTime; less than 1 ms
	// also means the default. A fraction of a millisecond is rounded up.
	WaitTime time.Duration
}

// FairMutex returns the fair lock stored at key name, configured by opt.
func (c *Client) FairMutex(name string, opt FairMutexOptions) *FairMutex {
	waitTime := opt.WaitTime
	if waitTime < time.Millisecond {
		waitTime = DefaultFairWaitTime
	}
	return &FairMutex{
		c:        c,
		name:     name,
		queue:    tagged("redisson_lock_queue", name),
		timeouts: tagged("redisson_lock_timeout", name),
		channel:  channelName(name),
		waitArg:  msArg(waitTime),
	}
}

// Name returns the lock's key.
func (m *FairMutex) Name() string { return m.name }

// Lock blocks until owner holds the lock or ctx ends, queueing behind earlier waiters. The lock
// is taken with the Client's LeaseTime and renewed by the watchdog until Unlock. Taking it again
// while holding it counts up.
func (m *FairMutex) Lock(ctx context.Context, owner Owner) error {
	_, err := m.acquire(ctx, owner, -1, 0)
	return err
}

// LockLease blocks until owner holds the lock or ctx ends, queueing behind earlier waiters. The
// lock expires after lease unless released earlier; it is not renewed.
func (m *FairMutex) LockLease(ctx context.Context, owner Owner, lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("lockcore: lease %v must be positive", lease)
	}
	_, err := m.acquire(ctx, owner, -1, lease)
	return err
}

// TryLock tries to take the lock for up to wait. With wait 0 it makes one attempt and never
// joins the queue: it succeeds only if the lock is free and nobody waits. A lease of 0 means the
// Client's LeaseTime with watchdog renewal; a positive lease expires and is not renewed. It
// reports whether owner holds the lock; running out of wait is not an error, and a waiter that
// gives up leaves the queue.
func (m *FairMutex) TryLock(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	if wait < 0 || lease < 0 {
		return false, fmt.Errorf("lockcore: wait %v and lease %v must not be negative", wait, lease)
	}
	return m.acquire(ctx, owner, wait, lease)
}

// acquire takes the lock, waiting in the queue up to wait (negative: until ctx ends).
func (m *FairMutex) acquire(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	c := m.c
	la, err := c.begin(ctx, owner, lease)
	if err != nil {
		return false, err
	}
	leaseArg, lease, watchdog := la.arg, la.d, la.watchdog
	// One field for the whole acquisition: it is the waiter's name in the queue and on its
	// wake-up channel.
	field := c.fieldOf(m.name, owner)
	if wait == 0 {
		ttl, err := m.try(ctx, fairTryLockScript, owner, field, leaseArg, lease, watchdog)
		return err == nil && ttl < 0, err
	}
	ttl, err := m.try(ctx, fairLockScript, owner, field, leaseArg, lease, watchdog)
	if err != nil || ttl < 0 {
		if err != nil {
			m.leave(ctx, field) // the attempt may have queued us before the error
		}
		return err == nil, err
	}
	ok, err := c.await(ctx, m.channel+":"+field, wait, ttl, func() (int64, error) {
		return m.try(ctx, fairLockScript, owner, field, leaseArg, lease, watchdog)
	})
	if !ok {
		m.leave(ctx, field)
	}
	return ok, err
}

// try runs one lock script. It returns -1 when owner now holds the lock, otherwise at most how
// long to wait in nanoseconds before trying again, 0 when there is no bound.
func (m *FairMutex) try(ctx context.Context, s *script, owner Owner, field, leaseArg string, lease time.Duration, watchdog bool) (int64, error) {
	c := m.c
	if ttl, refused := c.refuse(m.name, owner, field); refused {
		return ttl, nil
	}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	// Sent detached from ctx, as Mutex does: a caller that gave up must still learn whether the
	// attempt it sent took the lock.
	sent := c.now()
	c.holds.leaseMaySet(m.name, owner, sent, lease)
	res, unsynced := c.execScript(detach(ctx), s, []string{m.name, m.queue, m.timeouts}, []string{leaseArg, field, m.waitArg, now})
	ms, err := res.AsInt64()
	if f := syncFailed(unsynced); f != nil {
		err, unsynced = f, nil
	}
	if err != nil {
		if rueidis.IsRedisNil(err) {
			if unsynced != nil {
				// A grant the replicas have not all seen is none (see sync.go): undone by the
				// release of the hold just recorded, which wakes the next waiter as any
				// release does and settles the table.
				c.stats.failed.Add(1)
				c.holds.acquiredField(m.name, owner, field, leaseArg, lease, watchdog, sent)
				_ = m.Unlock(detach(ctx), owner)
				return 0, fmt.Errorf("lockcore: fair lock %q: %w", m.name, unsynced)
			}
			if c.grantedLate(ctx, m.name, field, leaseArgs{arg: leaseArg, d: lease, watchdog: watchdog}, sent) {
				return 1, nil
			}
			c.holds.acquiredField(m.name, owner, field, leaseArg, lease, watchdog, sent)
			return -1, nil
		}
		c.attemptFailed(m.name, field, err)
		return 0, fmt.Errorf("lockcore: fair lock %q: %w", m.name, err)
	}
	if ms <= 0 {
		return 0, nil
	}
	return ms * int64(time.Millisecond), nil
}

// leave takes owner out of the queue after it gave up, so that it does not hold up the waiters
// behind it until its deadline. If Redis does not answer, the Client's resolver retries it; the
// deadline drops the entry later in any case.
func (m *FairMutex) leave(ctx context.Context, field string) {
	c := m.c
	leave := func(ctx context.Context) error {
		return fairLeaveScript.exec(ctx, c.rdb, []string{m.queue, m.timeouts, m.name, m.channel},
			[]string{field, m.waitArg, unlockMessage, c.publishCmd}).Error()
	}
	ctx, cancel := context.WithTimeout(detach(ctx), c.opt.LeaseTime)
	defer cancel()
	if err := leave(ctx); err != nil && (!isRedisReply(err) || transientReply(err)) {
		// Unanswered (a partition), or refused for now (OOM: the waiters behind move up by a
		// write): the entry would hold up the waiters behind it until its deadline; the
		// resolver sends it again until Redis takes it.
		c.retryLater(leave, c.opt.LeaseTime)
	}
}

// Unlock releases one hold of owner on the lock. When the count reaches zero the key is deleted
// and "0" is published on the channel of the first waiter only. It returns an error wrapping
// ErrNotOwner when owner does not hold the lock.
func (m *FairMutex) Unlock(ctx context.Context, owner Owner) error {
	if owner.IsZero() {
		return ErrNoOwner
	}
	c := m.c
	h, field, leaseArg, ok := c.holds.lookup(m.name, owner)
	if !ok {
		return fmt.Errorf("%w: %q is held by another owner of this client", ErrNotOwner, m.name)
	}
	if h == nil {
		field = c.fieldOf(m.name, owner)
	}
	if leaseArg == "" {
		leaseArg = c.leaseArg
	}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	sent := c.now()
	if h != nil {
		// An inner hold's release sets the lease again (PEXPIRE) if it runs.
		c.holds.leaseMaySet(m.name, owner, sent, time.Duration(h.lease))
	}
	n, err := c.execRelease(detach(ctx), fairUnlockScript, []string{m.name, m.queue, m.timeouts, m.channel},
		[]string{unlockMessage, leaseArg, field, now, c.publishCmd})
	if err == nil && n == 0 && (h == nil || h.count <= 1) {
		// Redis counts more holds than the table: see Mutex.Unlock.
		c.holds.released(m.name, h, true, 0)
		c.doubt(m.name, field)
		return nil
	}
	if err != nil && !rueidis.IsRedisNil(err) && c.holds.releaseFailed(m.name, h, unknownOutcome(err)) {
		// An inner hold's release failed: the outer hold stands (see Mutex.Unlock).
		return fmt.Errorf("lockcore: unlock %q: %w", m.name, err)
	}
	if err != nil {
		// Stop renewing whatever the outcome, as Mutex.Unlock does; without an answer the
		// field goes in doubt until the resolver has seen it gone (see Mutex.Unlock).
		c.holds.released(m.name, h, true, 0)
		if !isRedisReply(err) {
			c.doubt(m.name, field)
		}
		if rueidis.IsRedisNil(err) {
			if h != nil {
				return fmt.Errorf("%w: the lease on %q ran out while held", ErrNotOwner, m.name)
			}
			return fmt.Errorf("%w: %q", ErrNotOwner, m.name)
		}
		return fmt.Errorf("lockcore: unlock %q: %w", m.name, err)
	}
	c.holds.released(m.name, h, n == 1, sent)
	return nil
}

// HeldBy reports whether this Client's local table shows owner holding the lock, and how many
// times. It does not ask Redis.
func (m *FairMutex) HeldBy(owner Owner) (int, bool) {
	return (&Mutex{c: m.c, name: m.name}).HeldBy(owner)
}
