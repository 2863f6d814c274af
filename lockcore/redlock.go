package lockcore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// ErrNoQuorum is returned by RedLock when fewer than a quorum of masters answered an attempt
// (errors, timeouts): the lock could not be granted whoever held it. Losing to another holder
// is not an error.
var ErrNoQuorum = errors.New("lockcore: redlock: too few masters answered for a quorum")

var _ Locker = (*RedLock)(nil)

// Defaults of a RedLock.
const (
	// DefaultRedLockNodeTimeout bounds the wait for one master's answer to one attempt or
	// release, so a dead or stalled master costs at most this much per attempt. It should be
	// small beside the lease (the Redlock algorithm suggests 5–50 ms for a 10 s lease on a LAN);
	// the default leaves room for loaded CI machines.
	DefaultRedLockNodeTimeout = 200 * time.Millisecond
	// DefaultRedLockRetryDelay is the mean pause between two attempts of a waiting RedLock,
	// jittered by ±50% so that contenders do not retry in lockstep.
	DefaultRedLockRetryDelay = 100 * time.Millisecond
)

// RedLock is the Redlock algorithm (Redisson's RedissonRedLock) over N independent masters,
// one Client each: an attempt takes the reentrant lock name on every master at once and
// succeeds when a quorum of N/2+1 granted it within the lease; then the lock is valid for
// validity = lease − elapsed − drift, where elapsed is the attempt's duration and drift =
// lease/100 + 2 ms allows for clock rate differences between the masters and for the time
// Redis itself takes to expire keys. A failed attempt releases the lock on every master that
// granted it, or may have (those that failed or did not answer in time), before returning.
//
// Owners. The same Owner is written on every master. Its field "<client id>:<n>" names the
// Client that made it and is unique on every master, so an Owner made by any Client serves
// (NewOwner makes one from the first). Each master's lock is a plain Mutex hash, so Redisson
// clients using that master exclude it as usual; a Redisson RedLock writes one field per
// master instead, which the algorithm does not need.
//
// Leases. With an explicit lease nothing renews the lock; the caller must finish within the
// validity TryLockValidity reports. With lease 0 each master's lock is a Mutex hold renewed by
// its own Client's watchdog, and validity is reported for the first lease (the smallest
// LeaseTime of the Clients): the watchdogs keep each master's hold alive independently while the
// process lives, which is Redisson's behaviour; a master that restarts without persistence
// loses its hold and is not re-taken, so renewal does not restore the quorum guarantee after
// master failures. Prefer an explicit lease where that matters.
//
// RedLock is safe for concurrent use by different Owners.
type RedLock struct {
	name        string
	locks       []*Mutex
	leaseTime   time.Duration // smallest Client LeaseTime: the lease of a lease-0 attempt
	nodeTimeout time.Duration
	retryDelay  time.Duration
}

// RedLockOptions configure a RedLock. The zero value of every field means its default.
type RedLockOptions struct {
	// NodeTimeout bounds the wait for one master's answer to one attempt or release. Default
	// DefaultRedLockNodeTimeout; zero or negative also means the default.
	NodeTimeout time.Duration
	// RetryDelay is the mean pause between two attempts of a waiting RedLock, jittered by ±50%.
	// Default DefaultRedLockRetryDelay; zero or negative also means the default.
	RetryDelay time.Duration
}

// NewRedLock returns the RedLock on key name over the masters of clients, one independent
// master (or single server) per Client, configured by opt.
func NewRedLock(clients []*Client, name string, opt RedLockOptions) *RedLock {
	if opt.NodeTimeout <= 0 {
		opt.NodeTimeout = DefaultRedLockNodeTimeout
	}
	if opt.RetryDelay <= 0 {
		opt.RetryDelay = DefaultRedLockRetryDelay
	}
	r := &RedLock{name: name, nodeTimeout: opt.NodeTimeout, retryDelay: opt.RetryDelay}
	for _, c := range clients {
		r.locks = append(r.locks, c.redisMutex(name))
		if r.leaseTime == 0 || c.opt.LeaseTime < r.leaseTime {
			r.leaseTime = c.opt.LeaseTime
		}
	}
	return r
}

// Name returns the lock's key, the same on every master.
func (r *RedLock) Name() string { return r.name }

// Quorum returns how many masters must grant an attempt: N/2+1.
func (r *RedLock) Quorum() int { return len(r.locks)/2 + 1 }

// NewOwner returns a fresh Owner for the RedLock, made by the first Client.
func (r *RedLock) NewOwner() Owner {
	if len(r.locks) == 0 {
		return Owner{}
	}
	return r.locks[0].c.NewOwner()
}

// Lock blocks until owner holds the lock on a quorum of masters or ctx ends, retrying after
// its RetryDelay (jittered). Each master's hold is renewed by its Client's watchdog.
func (r *RedLock) Lock(ctx context.Context, owner Owner) error {
	_, err := r.acquire(ctx, owner, -1, 0)
	return err
}

// LockLease is Lock with an explicit lease, not renewed. It returns the validity left.
func (r *RedLock) LockLease(ctx context.Context, owner Owner, lease time.Duration) (time.Duration, error) {
	if lease <= 0 {
		return 0, fmt.Errorf("lockcore: lease %v must be positive", lease)
	}
	if err := checkLease(lease); err != nil {
		return 0, err
	}
	return r.acquire(ctx, owner, -1, ceilMs(lease))
}

// TryLock makes attempts for up to wait (0: one attempt) and reports whether owner holds the
// lock; lease as Mutex.TryLock. When the last attempt failed because too few masters answered,
// the error wraps ErrNoQuorum and joins a NodeError for each master that failed or did not
// answer in time (ErrNodeTimeout).
func (r *RedLock) TryLock(ctx context.Context, owner Owner, wait, lease time.Duration) (bool, error) {
	v, _, err := r.TryLockValidity(ctx, owner, wait, lease)
	return v > 0, err
}

// TryLockValidity is TryLock that also returns the lock's validity (positive when held, 0 if
// not) and how many masters granted it.
func (r *RedLock) TryLockValidity(ctx context.Context, owner Owner, wait, lease time.Duration) (validity time.Duration, granted int, err error) {
	if wait < 0 || lease < 0 {
		return 0, 0, fmt.Errorf("lockcore: wait %v and lease %v must not be negative", wait, lease)
	}
	if err = checkLease(lease); err != nil {
		return 0, 0, err
	}
	var a attemptResult
	// Rounded as each master's lock rounds it, so that the validity is reckoned from the lease
	// the masters hold.
	a, err = r.acquireResult(ctx, owner, wait, ceilMs(lease))
	return a.validity, a.granted, err
}

func (r *RedLock) acquire(ctx context.Context, owner Owner, wait, lease time.Duration) (time.Duration, error) {
	a, err := r.acquireResult(ctx, owner, wait, lease)
	return a.validity, err
}

// attemptResult is the outcome of one attempt.
type attemptResult struct {
	validity time.Duration // positive when held
	granted  int           // masters that granted it
	err      error         // ErrNoQuorum and the masters' errors, when too few answered
}

// acquireResult makes attempts until one holds, wait runs out (negative: never) or ctx ends.
func (r *RedLock) acquireResult(ctx context.Context, owner Owner, wait, lease time.Duration) (attemptResult, error) {
	if owner.IsZero() {
		return attemptResult{}, ErrNoOwner
	}
	if len(r.locks) == 0 {
		return attemptResult{}, errors.New("lockcore: redlock over no masters")
	}
	var deadline time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
	}
	for {
		if err := ctx.Err(); err != nil {
			return attemptResult{}, err
		}
		a := r.attempt(ctx, owner, lease)
		if a.validity > 0 || wait == 0 {
			return a, a.err
		}
		sleep := r.retryDelay/2 + rand.N(r.retryDelay)
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return a, a.err
			}
			sleep = min(sleep, left)
		}
		t := time.NewTimer(sleep)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			if a.err != nil {
				return attemptResult{}, fmt.Errorf("%w (last attempt: %v)", ctx.Err(), a.err)
			}
			return attemptResult{}, ctx.Err()
		}
	}
}

// attempt tries every master at once and decides when all have answered, when too few are
// left to grant a quorum, or when the node timeout passes. A failed attempt releases the lock
// on every master where it was or may have been taken (granted, or answered with an error after
// the script may have run): each master's release follows its own answer, so it can never
// overtake the acquisition; attempt waits for those releases up to the node timeout, and
// masters that answer later release on their own.
func (r *RedLock) attempt(ctx context.Context, owner Owner, lease time.Duration) attemptResult {
	start := time.Now()
	n := len(r.locks)
	quorum := r.Quorum()
	type reply struct {
		i   int // the master's index
		ok  bool
		err error
	}
	// Buffered, so that masters answering after the decision never block.
	replies := make(chan reply, n)
	released := make(chan struct{}, n)
	decided := make(chan struct{})
	var release bool // set before decided is closed
	for i, m := range r.locks {
		go func() {
			ok, err := m.TryLock(ctx, owner, 0, lease)
			replies <- reply{i, ok, err}
			<-decided
			if release && (ok || err != nil) {
				_ = m.Unlock(context.WithoutCancel(ctx), owner)
			}
			released <- struct{}{}
		}()
	}
	var granted, refused, failed int
	var errs []error
	answered := make([]bool, n)
	timedOut := false
	timer := time.NewTimer(r.nodeTimeout)
	defer timer.Stop()
	// Wait for every answer, so that no acquisition is still on its way when Unlock is sent
	// (on the same connection, Unlock then queues behind it); stop early only when too few
	// masters are left for a quorum.
collect:
	for granted+refused+failed < n && n-refused-failed >= quorum {
		select {
		case rep := <-replies:
			answered[rep.i] = true
			switch {
			case rep.err != nil:
				failed++
				errs = append(errs, onNode(r.locks[rep.i].node(), rep.err))
			case rep.ok:
				granted++
			default:
				refused++
			}
		case <-timer.C:
			timedOut = true
			break collect
		}
	}
	effLease := lease
	if effLease == 0 {
		effLease = r.leaseTime
	}
	drift := effLease/100 + 2*time.Millisecond
	validity := effLease - time.Since(start) - drift
	if granted >= quorum && validity > 0 {
		close(decided)
		return attemptResult{validity: validity, granted: granted}
	}
	release = true
	close(decided)
	timer.Reset(r.nodeTimeout)
wait:
	for range n {
		select {
		case <-released:
		case <-timer.C:
			break wait
		}
	}
	res := attemptResult{granted: granted}
	// Unavailable, not merely taken: the masters that failed, or did not answer in time, are
	// more than a quorum can spare.
	down := failed
	if timedOut {
		down = n - granted - refused
		for i, ok := range answered {
			if !ok {
				errs = append(errs, &NodeError{Node: r.locks[i].node(), Err: ErrNodeTimeout})
			}
		}
	}
	if down > n-quorum {
		res.err = fmt.Errorf("%w: %d of %d masters failed or did not answer in %v, quorum %d",
			ErrNoQuorum, down, n, r.nodeTimeout, quorum)
		if len(errs) > 0 {
			res.err = fmt.Errorf("%w: %w", res.err, errors.Join(errs...))
		}
	}
	return res
}

// releaseOn unlocks on the masters at idx, all at once, waiting at most the node timeout. It
// runs even when ctx has ended.
func (r *RedLock) releaseOn(ctx context.Context, owner Owner, idx []int) []error {
	ctx = context.WithoutCancel(ctx)
	type reply struct {
		i   int // the master's index
		err error
	}
	replies := make(chan reply, len(idx))
	for _, i := range idx {
		m := r.locks[i]
		go func() { replies <- reply{i, onNode(m.node(), m.Unlock(ctx, owner))} }()
	}
	out := make([]error, 0, len(idx))
	answered := make(map[int]bool, len(idx))
	timer := time.NewTimer(r.nodeTimeout)
	defer timer.Stop()
	for range idx {
		select {
		case rep := <-replies:
			answered[rep.i] = true
			out = append(out, rep.err)
		case <-timer.C:
			for _, i := range idx {
				if !answered[i] {
					out = append(out, &NodeError{Node: r.locks[i].node(), Err: ErrNodeTimeout})
				}
			}
			return out
		}
	}
	return out
}

// Unlock releases owner's hold on every master. It succeeds when a quorum released one. When
// so many masters answered that owner did not hold it that no quorum can have held it (its
// lease ran out, or it was never taken), the error wraps ErrNotOwner; either way it joins one
// NodeError per master that did not release.
func (r *RedLock) Unlock(ctx context.Context, owner Owner) error {
	if owner.IsZero() {
		return ErrNoOwner
	}
	idx := make([]int, len(r.locks))
	for i := range idx {
		idx[i] = i
	}
	n, quorum := len(r.locks), r.Quorum()
	released, notOwner := 0, 0
	var failures []error // one NodeError per master that did not release
	for _, err := range r.releaseOn(ctx, owner, idx) {
		switch {
		case err == nil:
			released++
			continue
		case errors.Is(err, ErrNotOwner):
			notOwner++
		}
		failures = append(failures, err)
	}
	switch {
	case released >= quorum:
		return nil
	case notOwner > n-quorum:
		return fmt.Errorf("%w: redlock %q not held on %d of %d masters, quorum %d: %w",
			ErrNotOwner, r.name, notOwner, n, quorum, errors.Join(failures...))
	}
	return fmt.Errorf("lockcore: redlock %q released on %d of %d masters, quorum %d: %w", r.name, released, n, quorum, errors.Join(failures...))
}
