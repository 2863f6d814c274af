package lockcore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Locker is one lock that a MultiLock can take: Mutex, FairMutex, the halves of an RWMutex
// (RWMutex.ReadLocker, RWMutex.WriteLocker), a RedLock, a MultiLock, and any other lock kind
// with these methods, possibly on different Clients and different Redis deployments.
//
// TryLock takes the lock for owner, waiting up to wait (0: one attempt); a lease of 0 means the
// lock kind's default lease with watchdog renewal, a positive lease expires and is not renewed.
// It reports false, not an error, when wait runs out. Unlock releases one hold and returns an
// error wrapping ErrNotOwner when owner does not hold the lock. Name returns the lock's key;
// MultiLock orders its locks by it.
type Locker interface {
	Name() string
	TryLock(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error)
	Unlock(ctx context.Context, owner Owner) error
}

var (
	_ Locker = (*Mutex)(nil)
	_ Locker = (*FairMutex)(nil)
	_ Locker = (*ReadLock)(nil)
	_ Locker = (*WriteLock)(nil)
	_ Locker = (*MultiLock)(nil)
)

// DefaultMultiLockStepWait bounds how long a MultiLock waits for one lock while it holds others.
// When it runs out, the MultiLock releases what it holds and starts over, so that a lock held
// for long by someone outside the MultiLock's order does not make it sit on the others; it is
// Redisson's per-lock wait of 1.5 s.
const DefaultMultiLockStepWait = 1500 * time.Millisecond

// multiLockBackoff is the most a MultiLock sleeps between two rounds, jittered, so that two
// MultiLocks that both gave up do not retry in lockstep.
const multiLockBackoff = 20 * time.Millisecond

// forever stands for "no wait limit" in a Locker's TryLock, which has no way to say it: about 146
// years, ctx ends the wait long before.
const forever = time.Duration(1 << 62)

// MultiLock holds several locks as one, all or nothing (Redisson's RedissonMultiLock). Each
// lock is taken by its own call, so the locks may live in different cluster slots, on
// different Clients and deployments, and be of different kinds.
//
// Two MultiLocks over overlapping sets never deadlock: the locks are always taken in one
// canonical order (by Name, then by the order given), so no two MultiLocks wait for each other
// in a cycle; and while holding some locks a MultiLock waits at most its step wait for the next
// one before releasing everything and starting over, so a lock held outside that order (a plain
// Mutex user, a MultiLock on other Clients with the same names) cannot block it for long either.
// The first lock of a round is waited for without a bound, as nothing is held then.
//
// A failed round, an error or ctx ending releases every lock the round took before returning.
// MultiLock is safe for concurrent use by different Owners.
type MultiLock struct {
	locks    []Locker // in canonical order
	stepWait time.Duration
}

// MultiLockOptions configure a MultiLock. The zero value of every field means its default.
type MultiLockOptions struct {
	// StepWait bounds how long the MultiLock waits for each lock after the first while holding
	// others, before it releases them and starts over. Default DefaultMultiLockStepWait; zero or
	// negative also means the default.
	StepWait time.Duration
}

// NewMultiLock returns a MultiLock over locks, which may come from any Client, configured by
// opt. Duplicates are taken twice (the lock kinds are reentrant).
func NewMultiLock(locks []Locker, opt MultiLockOptions) *MultiLock {
	if opt.StepWait <= 0 {
		opt.StepWait = DefaultMultiLockStepWait
	}
	sorted := slices.Clone(locks)
	slices.SortStableFunc(sorted, func(a, b Locker) int { return strings.Compare(a.Name(), b.Name()) })
	return &MultiLock{locks: sorted, stepWait: opt.StepWait}
}

// Name returns the names of the locks in the order they are taken, joined by ",", so that a
// MultiLock can itself be part of a MultiLock.
func (m *MultiLock) Name() string {
	names := make([]string, len(m.locks))
	for i, l := range m.locks {
		names[i] = l.Name()
	}
	return strings.Join(names, ",")
}

// Locks returns the locks in the order they are taken.
func (m *MultiLock) Locks() []Locker { return slices.Clone(m.locks) }

// Lock blocks until owner holds every lock or ctx ends. The locks are taken with their default
// leases and renewed by their Clients' watchdogs until Unlock.
func (m *MultiLock) Lock(ctx context.Context, owner Owner) error {
	_, err := m.acquire(ctx, owner, -1, 0)
	return err
}

// TryLock tries to take every lock within wait (0: one attempt at each, no waiting). A lease of
// 0 means each lock's default lease with watchdog renewal. A positive lease is given to each
// lock as it is taken, so the first one taken expires first: the MultiLock is held as a whole
// for lease minus the time the acquisition took, and a round that took the whole lease fails.
// It reports whether owner holds every lock; if not, it holds none of them.
func (m *MultiLock) TryLock(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	if wait < 0 || lease < 0 {
		return false, fmt.Errorf("lockcore: wait %v and lease %v must not be negative", wait, lease)
	}
	if err := checkLease(lease); err != nil {
		return false, err
	}
	return m.acquire(ctx, owner, wait, lease)
}

// acquire runs rounds until one takes every lock, wait runs out (negative: never) or ctx ends.
func (m *MultiLock) acquire(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	if owner.IsZero() {
		return false, ErrNoOwner
	}
	var deadline time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
	}
	// left returns the wait left for the next call (forever when unbounded) and whether any is.
	left := func() (time.Duration, bool) {
		switch {
		case wait == 0:
			return 0, true
		case deadline.IsZero():
			return forever, true
		}
		d := time.Until(deadline)
		return max(d, 0), d > 0
	}
	for {
		held := 0
		var first time.Time
		var failed bool
		for i, l := range m.locks {
			w, _ := left()
			if i > 0 {
				w = min(w, m.stepWait)
			}
			ok, err := l.TryLock(ctx, owner, w, lease)
			if err != nil {
				m.release(ctx, owner, held)
				return false, fmt.Errorf("lockcore: multilock %s: %w", l.Name(), partError(l, err))
			}
			if !ok {
				failed = true
				break
			}
			if held == 0 {
				first = time.Now()
			}
			held++
		}
		if !failed && lease > 0 && time.Since(first) >= lease {
			// The first lock's lease ran out while the last was taken: not held as a whole.
			failed = true
		}
		if !failed {
			return true, nil
		}
		m.release(ctx, owner, held)
		if _, more := left(); wait == 0 || !more {
			return false, nil
		}
		// Somebody holds a later lock: let them finish before the next round.
		sleep := rand.N(multiLockBackoff) + time.Millisecond
		if d, _ := left(); d < sleep {
			sleep = d
		}
		t := time.NewTimer(sleep)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		}
	}
}

// release unlocks the first n locks, last taken first. It runs even when ctx has ended: a
// failed or abandoned round must not leave locks behind. Their errors are of no use to the
// caller, who does not hold the MultiLock; leases bound what a failed unlock leaves.
func (m *MultiLock) release(ctx context.Context, owner Owner, n int) {
	ctx = context.WithoutCancel(ctx)
	for i := n - 1; i >= 0; i-- {
		_ = m.locks[i].Unlock(ctx, owner)
	}
}

// Unlock releases one hold of every lock, last taken first, and tries them all even when some
// fail. The error joins the failures, each a NodeError naming the lock's deployment when the
// lock is one of lockcore's; it wraps ErrNotOwner if a lock was not held by owner.
func (m *MultiLock) Unlock(ctx context.Context, owner Owner) error {
	if owner.IsZero() {
		return ErrNoOwner
	}
	var errs []error
	for i := len(m.locks) - 1; i >= 0; i-- {
		if err := m.locks[i].Unlock(ctx, owner); err != nil {
			errs = append(errs, fmt.Errorf("lockcore: multilock unlock %s: %w", m.locks[i].Name(), partError(m.locks[i], err)))
		}
	}
	return errors.Join(errs...)
}

// partError names the deployment of part l in its error, when l knows it (see NodeError).
func partError(l Locker, err error) error {
	if node, ok := lockerNode(l); ok {
		return onNode(node, err)
	}
	return err
}
