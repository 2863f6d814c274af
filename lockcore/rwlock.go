package lockcore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"
)

// ErrUpgrade is returned when an owner holding read holds of a read-write lock, and not its
// write hold, asks for the write lock: it would wait for its own read holds forever (Redisson's
// reader waits; lockcore refuses). Release the read holds first, or take the write lock first
// and read holds under it (the downgrade path).
var ErrUpgrade = errors.New("lockcore: a reader cannot upgrade to the write lock")

// RWMutex is a read-write lock with Redisson's RReadWriteLock protocol: readers share it, a
// writer excludes readers and other writers, both reentrant. The writer may also take read
// holds, and keeps them when it releases the write lock (downgrade); a reader cannot upgrade
// (ErrUpgrade). Each read hold expires on its own lease, so a crashed reader does not pin the
// lock longer than its lease; locks taken without a lease are renewed by the watchdog.
//
// Waiters sleep on "redisson_rwlock:{name}": a write release wakes every waiter of this Client
// (readers can all proceed), a read release that frees the lock wakes one.
//
// RWMutex is a cheap handle, safe for concurrent use by different Owners.
type RWMutex struct {
	c       *Client
	name    string
	channel string
	prefix  string // the lock's hash-tagged key prefix: "{name}", or name if it has a tag
}

// RWMutex returns the read-write lock stored at key name.
func (c *Client) RWMutex(name string) *RWMutex {
	prefix := hashTagged(name)
	return &RWMutex{c: c, name: name, channel: "redisson_rwlock:" + prefix, prefix: prefix}
}

// Name returns the lock's key.
func (rw *RWMutex) Name() string { return rw.name }

// RLock blocks until owner holds a read hold or ctx ends. The hold is taken with the Client's
// LeaseTime and renewed by the watchdog until RUnlock. Taking it again counts up.
func (rw *RWMutex) RLock(ctx context.Context, owner Owner) error {
	_, err := rw.acquire(ctx, owner, false, -1, 0)
	return err
}

// RLockLease blocks until owner holds a read hold or ctx ends. The hold expires after lease
// unless released earlier; it is not renewed.
func (rw *RWMutex) RLockLease(ctx context.Context, owner Owner, lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("lockcore: lease %v must be positive", lease)
	}
	_, err := rw.acquire(ctx, owner, false, -1, lease)
	return err
}

// TryRLock tries to take a read hold for up to wait (0: one attempt). A lease of 0 means the
// Client's LeaseTime with watchdog renewal; a positive lease expires and is not renewed. It
// reports whether owner got the hold; running out of wait is not an error.
func (rw *RWMutex) TryRLock(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	if wait < 0 || lease < 0 {
		return false, fmt.Errorf("lockcore: wait %v and lease %v must not be negative", wait, lease)
	}
	return rw.acquire(ctx, owner, false, wait, lease)
}

// Lock blocks until owner holds the write lock or ctx ends, with the Client's LeaseTime renewed
// by the watchdog until Unlock. A read holder gets an error wrapping ErrUpgrade at once.
func (rw *RWMutex) Lock(ctx context.Context, owner Owner) error {
	_, err := rw.acquire(ctx, owner, true, -1, 0)
	return err
}

// LockLease blocks until owner holds the write lock or ctx ends. The hold expires after lease
// unless released earlier; it is not renewed.
func (rw *RWMutex) LockLease(ctx context.Context, owner Owner, lease time.Duration) error {
	if lease <= 0 {
		return fmt.Errorf("lockcore: lease %v must be positive", lease)
	}
	_, err := rw.acquire(ctx, owner, true, -1, lease)
	return err
}

// TryLock tries to take the write lock for up to wait (0: one attempt), with lease as TryRLock.
// It reports whether owner holds it; running out of wait is not an error. A read holder gets
// false and an error wrapping ErrUpgrade.
func (rw *RWMutex) TryLock(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	if wait < 0 || lease < 0 {
		return false, fmt.Errorf("lockcore: wait %v and lease %v must not be negative", wait, lease)
	}
	return rw.acquire(ctx, owner, true, wait, lease)
}

// acquire takes a read or write hold, waiting up to wait (negative: until ctx ends).
func (rw *RWMutex) acquire(ctx context.Context, owner Owner, write bool, wait, lease time.Duration) (bool, error) {
	c := rw.c
	la, err := c.begin(ctx, owner, lease)
	if err != nil {
		return false, err
	}
	leaseArg, lease, watchdog := la.arg, la.d, la.watchdog
	ttl, err := rw.try(ctx, owner, write, leaseArg, lease, watchdog)
	if err != nil || ttl < 0 || wait == 0 {
		return err == nil && ttl < 0, err
	}
	return c.await(ctx, rw.channel, wait, ttl, func() (int64, error) {
		return rw.try(ctx, owner, write, leaseArg, lease, watchdog)
	})
}

// try runs the read or write lock script once: -1 when owner now holds, else the lock's
// remaining TTL in nanoseconds (0 if it has none).
func (rw *RWMutex) try(ctx context.Context, owner Owner, write bool, leaseArg string, lease time.Duration, watchdog bool) (int64, error) {
	c := rw.c
	readField, writeField := owner.field, owner.field+":write"
	timeouts := rw.timeoutPrefix(readField)
	var res rueidis.RedisResult
	// Detached for the reason Mutex.try gives: a sent attempt must learn its outcome.
	sent := c.now()
	var unsynced error
	if write {
		res, unsynced = c.execScript(detach(ctx), rwWriteLockScript, []string{rw.name, timeouts}, []string{leaseArg, writeField, readField})
	} else {
		res, unsynced = c.execScript(detach(ctx), rwReadLockScript, []string{rw.name, timeouts}, []string{leaseArg, readField, writeField})
	}
	pttl, err := res.AsInt64()
	if f := syncFailed(unsynced); f != nil {
		err, unsynced = f, nil
	}
	if err != nil {
		if rueidis.IsRedisNil(err) {
			if write {
				c.holds.acquiredWith(rw.holdKey(writeField), owner, writeField, leaseArg, lease, watchdog, sent,
					&renewer{script: rwWriteRenewScript, keys: []string{rw.name}})
			} else {
				c.holds.acquiredWith(rw.holdKey(readField), owner, readField, leaseArg, lease, watchdog, sent,
					&renewer{script: rwReadRenewScript, keys: []string{rw.name, timeouts}})
			}
			if unsynced != nil {
				// A grant the replicas have not all seen is none (see sync.go): undone by the
				// release of the hold just recorded, which settles the table as any release.
				if write {
					_ = rw.Unlock(detach(ctx), owner)
				} else {
					_ = rw.RUnlock(detach(ctx), owner)
				}
				return 0, fmt.Errorf("lockcore: lock %q: %w", rw.name, unsynced)
			}
			return -1, nil
		}
		return 0, fmt.Errorf("lockcore: lock %q: %w", rw.name, err)
	}
	switch {
	case pttl > 0:
		return pttl * int64(time.Millisecond), nil
	case pttl == -3:
		return 0, fmt.Errorf("%w: %q", ErrUpgrade, rw.name)
	case pttl == -2:
		// Expired between the script's checks and PTTL; retry at once.
		return 1, nil
	default:
		return 0, nil
	}
}

// RUnlock releases one read hold of owner. It returns an error wrapping ErrNotOwner when owner
// has no read hold (never took one, or its lease ran out).
func (rw *RWMutex) RUnlock(ctx context.Context, owner Owner) error {
	if owner.IsZero() {
		return ErrNoOwner
	}
	c := rw.c
	key := rw.holdKey(owner.field)
	h, field, _, ok := c.holds.lookup(key, owner)
	if !ok {
		return fmt.Errorf("%w: read hold on %q is another owner's", ErrNotOwner, rw.name)
	}
	if _, err := c.execRelease(detach(ctx), rwReadUnlockScript,
		[]string{rw.name, rw.channel, rw.timeoutPrefix(field), rw.prefix},
		[]string{unlockMessage, field, c.publishCmd}); err != nil {
		if !rueidis.IsRedisNil(err) && c.holds.releaseFailed(key, h, unknownOutcome(err)) {
			// An inner read hold's release failed: the outer one stands (see Mutex.Unlock). If
			// the release did not run, Redis keeps one read hold more than the table, which
			// expires with its own lease once the last RUnlock stops the renewals.
			return fmt.Errorf("lockcore: read unlock %q: %w", rw.name, err)
		}
		// Stop renewing whatever the outcome, as Mutex.Unlock does.
		c.holds.released(key, h, true, 0)
		if rueidis.IsRedisNil(err) {
			if h != nil {
				return fmt.Errorf("%w: the read lease on %q ran out while held", ErrNotOwner, rw.name)
			}
			return fmt.Errorf("%w: no read hold on %q", ErrNotOwner, rw.name)
		}
		return fmt.Errorf("lockcore: read unlock %q: %w", rw.name, err)
	}
	// The script says whether the lock is gone, not whether owner's field is; the local count
	// says that.
	c.holds.releasedOne(key, h)
	return nil
}

// Unlock releases one write hold of owner. Releasing the last one frees the lock, or leaves it
// in read mode if owner took read holds meanwhile, and wakes every waiter. It returns an error
// wrapping ErrNotOwner when owner does not hold the write lock.
func (rw *RWMutex) Unlock(ctx context.Context, owner Owner) error {
	if owner.IsZero() {
		return ErrNoOwner
	}
	c := rw.c
	field := owner.field + ":write"
	key := rw.holdKey(field)
	h, _, leaseArg, ok := c.holds.lookup(key, owner)
	if !ok {
		return fmt.Errorf("%w: write hold on %q is another owner's", ErrNotOwner, rw.name)
	}
	if h != nil {
		field = h.field
	}
	if leaseArg == "" {
		leaseArg = c.leaseArg
	}
	n, err := c.execRelease(detach(ctx), rwWriteUnlockScript, []string{rw.name, rw.channel},
		[]string{wakeAllMessage, leaseArg, field, c.publishCmd})
	// Redis counts more write holds than the table did (a write lock whose reply was lost, then
	// taken again by the same owner, counted as re-entry): nobody holds the rest, and the lock
	// would outlive every holder, renewed by nobody but taken by nobody else either until its
	// lease ran out. Release them one by one, a bounded number of times.
	for i := 0; err == nil && n == 0 && (h == nil || h.count <= 1) && i < maxExcessHolds; i++ {
		n, err = c.execRelease(detach(ctx), rwWriteUnlockScript, []string{rw.name, rw.channel},
			[]string{wakeAllMessage, leaseArg, field, c.publishCmd})
		if err == nil && n == 1 {
			c.holds.released(key, h, true, 0)
			return nil
		}
	}
	if err != nil && !rueidis.IsRedisNil(err) && c.holds.releaseFailed(key, h, unknownOutcome(err)) {
		// An inner write hold's release failed: the outer one stands (see Mutex.Unlock); a
		// hold Redis counts beyond the table's is released by the last Unlock (above).
		return fmt.Errorf("lockcore: write unlock %q: %w", rw.name, err)
	}
	if err != nil {
		c.holds.released(key, h, true, 0)
		if rueidis.IsRedisNil(err) {
			if h != nil {
				return fmt.Errorf("%w: the write lease on %q ran out while held", ErrNotOwner, rw.name)
			}
			return fmt.Errorf("%w: no write hold on %q", ErrNotOwner, rw.name)
		}
		return fmt.Errorf("lockcore: write unlock %q: %w", rw.name, err)
	}
	c.holds.released(key, h, n == 1, c.now())
	return nil
}

// maxExcessHolds bounds the releases an Unlock sends for holds Redis counts beyond the table's.
const maxExcessHolds = 16

// timeoutPrefix is the prefix of the per-hold read timeout keys of the reader field:
// "{name}:<field>:rwlock_timeout", hold n at prefix + ":<n>".
func (rw *RWMutex) timeoutPrefix(field string) string {
	return rw.prefix + ":" + field + ":rwlock_timeout"
}

// holdKey is the hold table key of one field of the lock: readers of one Client share the lock,
// so its holds are recorded per field, not per name as a Mutex's.
func (rw *RWMutex) holdKey(field string) string {
	return rw.name + "\x00" + field
}

// ReadLocker returns the read half of rw as a Locker: Lock, TryLock and Unlock take and release
// read holds.
func (rw *RWMutex) ReadLocker() *ReadLock { return &ReadLock{rw: rw} }

// WriteLocker returns the write half of rw as a Locker.
func (rw *RWMutex) WriteLocker() *WriteLock { return &WriteLock{rw: rw} }

// ReadLock is the read half of an RWMutex (Redisson's readLock()), for code that takes any
// Locker, such as MultiLock. It is safe for concurrent use by different Owners.
type ReadLock struct{ rw *RWMutex }

// Name returns the lock's key.
func (l *ReadLock) Name() string { return l.rw.name }

// Lock is RWMutex.RLock.
func (l *ReadLock) Lock(ctx context.Context, owner Owner) error { return l.rw.RLock(ctx, owner) }

// LockLease is RWMutex.RLockLease.
func (l *ReadLock) LockLease(ctx context.Context, owner Owner, lease time.Duration) error {
	return l.rw.RLockLease(ctx, owner, lease)
}

// TryLock is RWMutex.TryRLock.
func (l *ReadLock) TryLock(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	return l.rw.TryRLock(ctx, owner, wait, lease)
}

// Unlock is RWMutex.RUnlock.
func (l *ReadLock) Unlock(ctx context.Context, owner Owner) error { return l.rw.RUnlock(ctx, owner) }

// WriteLock is the write half of an RWMutex (Redisson's writeLock()), for code that takes any
// Locker, such as MultiLock. It is safe for concurrent use by different Owners.
type WriteLock struct{ rw *RWMutex }

// Name returns the lock's key.
func (l *WriteLock) Name() string { return l.rw.name }

// Lock is RWMutex.Lock.
func (l *WriteLock) Lock(ctx context.Context, owner Owner) error { return l.rw.Lock(ctx, owner) }

// LockLease is RWMutex.LockLease.
func (l *WriteLock) LockLease(ctx context.Context, owner Owner, lease time.Duration) error {
	return l.rw.LockLease(ctx, owner, lease)
}

// TryLock is RWMutex.TryLock.
func (l *WriteLock) TryLock(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	return l.rw.TryLock(ctx, owner, wait, lease)
}

// Unlock is RWMutex.Unlock.
func (l *WriteLock) Unlock(ctx context.Context, owner Owner) error { return l.rw.Unlock(ctx, owner) }
