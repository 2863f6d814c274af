package lockcore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"
)

// FencedMutex is a reentrant lock whose every grant returns a fencing token, with Redisson's
// RFencedLock protocol: the lock is the same hash as a Mutex (the two exclude each other), and
// each grant increments the counter at redisson_lock_token:{name} in the same script, so a
// token is strictly greater than the token of every earlier grant of the lock. A resource that
// remembers the highest token it has seen can then reject a holder whose lease ran out.
//
// Reentrancy: like Redisson, a reentrant acquisition is a grant too and returns a new, greater
// token, not the one of the outer hold. Use the latest token for writes made under it; any
// token of the current holder is above every token of earlier holders.
//
// The token counter has no TTL and outlives the lock on purpose: deleting or expiring it would
// restart tokens at 1, below tokens a resource may have seen. It is one small key per lock name
// (TokenKey); delete it only when no resource will check tokens of the lock again.
//
// A FencedMutex is a cheap handle, safe for concurrent use by different Owners.
type FencedMutex struct {
	m     Mutex
	token string
}

// FencedMutex returns the fenced lock stored at key name.
func (c *Client) FencedMutex(name string) *FencedMutex {
	return &FencedMutex{
		m:     *c.redisMutex(name),
		token: tagged("redisson_lock_token", name),
	}
}

// Name returns the lock's key.
func (f *FencedMutex) Name() string { return f.m.name }

// TokenKey returns the key of the lock's token counter, redisson_lock_token:{name}.
func (f *FencedMutex) TokenKey() string { return f.token }

// Lock blocks until owner holds the lock or ctx ends, and returns the grant's token. The lock is
// taken with the Client's LeaseTime and renewed by the watchdog until Unlock.
func (f *FencedMutex) Lock(ctx context.Context, owner Owner) (int64, error) {
	token, _, err := f.acquire(ctx, owner, -1, 0)
	return token, err
}

// LockLease blocks until owner holds the lock or ctx ends, and returns the grant's token. The
// lock expires after lease unless released earlier; it is not renewed.
func (f *FencedMutex) LockLease(ctx context.Context, owner Owner, lease time.Duration) (int64, error) {
	if lease <= 0 {
		return 0, fmt.Errorf("lockcore: lease %v must be positive", lease)
	}
	token, _, err := f.acquire(ctx, owner, -1, lease)
	return token, err
}

// TryLock tries to take the lock for up to wait (0: one attempt, no waiting), with lease as
// Mutex.TryLock takes it. It reports whether owner holds the lock and, if so, the grant's token
// (tokens start at 1; it is 0 when not granted). Running out of wait is not an error.
func (f *FencedMutex) TryLock(ctx context.Context, owner Owner, wait, lease time.Duration) (int64, bool, error) {
	if wait < 0 || lease < 0 {
		return 0, false, fmt.Errorf("lockcore: wait %v and lease %v must not be negative", wait, lease)
	}
	return f.acquire(ctx, owner, wait, lease)
}

// acquire takes the lock, waiting up to wait (negative: until ctx ends).
func (f *FencedMutex) acquire(ctx context.Context, owner Owner, wait, lease time.Duration) (int64, bool, error) {
	c := f.m.c
	la, err := c.begin(ctx, owner, lease)
	if err != nil {
		return 0, false, err
	}
	leaseArg, lease, watchdog := la.arg, la.d, la.watchdog
	var token int64
	try := func() (int64, error) {
		var ttl int64
		var err error
		ttl, token, err = f.try(ctx, owner, leaseArg, lease, watchdog)
		return ttl, err
	}
	ttl, err := try()
	if err != nil || ttl < 0 || wait == 0 {
		return token, err == nil && ttl < 0, err
	}
	ok, err := c.await(ctx, channelName(f.m.name), wait, ttl, try)
	if !ok {
		token = 0
	}
	return token, ok, err
}

// try runs the lock script once. It returns -1 and the token when owner now holds the lock,
// otherwise the lock's remaining TTL in nanoseconds (0 if it has none).
func (f *FencedMutex) try(ctx context.Context, owner Owner, leaseArg string, lease time.Duration, watchdog bool) (int64, int64, error) {
	c := f.m.c
	field := c.fieldOf(f.m.name, owner)
	if ttl, refused := c.refuse(f.m.name, owner, field); refused {
		return ttl, 0, nil
	}
	// Sent detached from ctx, as Mutex does: a caller that gave up must still learn whether the
	// attempt it sent took the lock.
	c.stats.attempts.Add(1)
	sent := c.now()
	c.holds.leaseMaySet(f.m.name, owner, sent, lease)
	// In synced mode the grant and its token increment are confirmed only once the replicas
	// have them: a token handed out is then never above the counter a promoted replica has, so
	// a fail-over cannot hand the same or a lower token to the next holder.
	res, unsynced := c.execScript(detach(ctx), fencedLockScript, []string{f.m.name, f.token}, []string{leaseArg, field})
	if se, ok := unsynced.(*SyncError); ok && se.granted() {
		c.stats.failed.Add(1)
		c.undoGrant(ctx, f.m.name, field, leaseArg)
		return 0, 0, fmt.Errorf("lockcore: fenced lock %q: %w", f.m.name, se)
	}
	reply, err := res.AsIntSlice()
	if f := syncFailed(unsynced); f != nil {
		err = f
	}
	if err == nil && len(reply) != 2 {
		err = fmt.Errorf("unexpected reply %v", reply)
	}
	if err != nil {
		c.attemptFailed(f.m.name, field, err)
		return 0, 0, fmt.Errorf("lockcore: fenced lock %q: %w", f.m.name, err)
	}
	if pttl, token := reply[0], reply[1]; pttl != -1 || token <= 0 {
		c.stats.failed.Add(1)
	}
	switch pttl, token := reply[0], reply[1]; {
	case pttl == -1 && token > 0:
		if c.grantedLate(ctx, f.m.name, field, leaseArgs{arg: leaseArg, d: lease, watchdog: watchdog}, sent) {
			return 1, 0, nil
		}
		c.holds.acquiredField(f.m.name, owner, field, leaseArg, lease, watchdog, sent)
		return -1, token, nil
	case pttl > 0:
		return pttl * int64(time.Millisecond), 0, nil
	case pttl == -2:
		// Expired between the script's checks and PTTL; retry at once.
		return 1, 0, nil
	default:
		return 0, 0, nil
	}
}

// Unlock releases one hold of owner on the lock, exactly as Mutex.Unlock does; the token counter
// is left alone. It returns an error wrapping ErrNotOwner when owner does not hold the lock.
func (f *FencedMutex) Unlock(ctx context.Context, owner Owner) error {
	return f.m.Unlock(ctx, owner)
}

// HeldBy reports whether this Client's local table shows owner holding the lock, and how many
// times. It does not ask Redis.
func (f *FencedMutex) HeldBy(owner Owner) (int, bool) {
	return f.m.HeldBy(owner)
}

// Token returns the lock's latest token: that of the latest grant, by any client, or 0 if the
// lock was never granted. It asks Redis.
func (f *FencedMutex) Token(ctx context.Context) (int64, error) {
	c := f.m.c
	n, err := c.rdb.Do(ctx, c.rdb.B().Get().Key(f.token).Build().Pin()).AsInt64()
	if rueidis.IsRedisNil(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("lockcore: token of %q: %w", f.m.name, err)
	}
	return n, nil
}
