package adapter

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
)

// Memory is a lock in the adapter's memory, with leases: no Redis, so that an adapter driving
// it (adapters/null) costs lockbench only the protocol. It keeps the rules a real library must
// (exclusion, non-owner release refused, wait limits, lease expiry), so that it passes
// driver-check, and it has every kind the protocol drives but fair (its waiters race for a
// freed lock): reentrant, read-write (a mutex is the write lock of the same name), multi and
// fenced. A grant that does not wait allocates nothing.
// Safe for concurrent use.
type Memory struct {
	lease time.Duration
	mu    sync.Mutex
	locks map[string]*memLock // the held ones, and those waited for
	free  []*memLock          // released, for reuse: a benchmark's names come and go
	token int64               // the last fencing token given
}

// memLock is one name's state, under Memory.mu.
type memLock struct {
	owner   string         // the writer's (mutex, write, fenced), "" when none
	count   int            // its holds
	readers map[string]int // read holds per owner
	nread   int            // their sum
	expires time.Time      // zero: no lease
	freed   chan struct{}  // made by a waiter, closed and cleared at each release or expiry
}

var (
	_ ImmediateFenced = (*Memory)(nil)
	_ RWLibrary       = (*Memory)(nil)
	_ MultiLibrary    = (*Memory)(nil)
	_ FencedLibrary   = (*Memory)(nil)
)

// maxFree bounds Memory.free.
const maxFree = 1024

// NewMemory returns an empty Memory whose grants last lease (0: until released).
func NewMemory(lease time.Duration) *Memory {
	return &Memory{lease: lease, locks: map[string]*memLock{}}
}

// Hello implements Library.
func (m *Memory) Hello() extdriver.Hello {
	return extdriver.Hello{Library: "lockbench null adapter (in-memory lock, no Redis)", Version: "2",
		Language: runtime.Version(), Kinds: extdriver.KindNames(extdriver.Kinds &^ drivers.KindFair)} // its waiters race: not fair
}

func (m *Memory) now() time.Time {
	if m.lease <= 0 {
		return time.Time{} // no lease: no clock read
	}
	return time.Now()
}

// expire ends l's holds if its lease ran out.
func (m *Memory) expire(l *memLock, now time.Time) {
	if l.expires.IsZero() || !now.After(l.expires) || l.count == 0 && l.nread == 0 {
		return
	}
	l.owner, l.count, l.nread, l.expires = "", 0, 0, time.Time{}
	clear(l.readers)
	l.wake()
}

func (l *memLock) wake() {
	if l.freed != nil {
		close(l.freed)
		l.freed = nil
	}
}

func (l *memLock) grantable(owner string, shared bool) bool {
	if shared { // readers share; the writer may read too
		return l.count == 0 || l.owner == owner
	}
	return (l.count == 0 || l.owner == owner) && l.nread == 0
}

// tryLocked grants owner every name at once, shared (read) or not, if it can now, and returns
// the grant's fencing token; else the lock to wait for.
func (m *Memory) tryLocked(owner string, names []string, shared bool) (wait *memLock, token int64) {
	now := m.now()
	for _, n := range names {
		if l := m.locks[n]; l != nil {
			m.expire(l, now)
			if !l.grantable(owner, shared) {
				return l, 0
			}
		}
	}
	for _, n := range names {
		l := m.locks[n]
		if l == nil {
			l = m.newLock()
			m.locks[n] = l
		}
		if shared {
			if l.readers == nil {
				l.readers = map[string]int{}
			}
			l.readers[owner]++
			l.nread++
		} else {
			l.owner = owner
			l.count++
		}
		if m.lease > 0 {
			l.expires = now.Add(m.lease)
		}
	}
	m.token++
	return nil, m.token
}

func (m *Memory) newLock() *memLock {
	if n := len(m.free); n > 0 {
		l := m.free[n-1]
		m.free = m.free[:n-1]
		return l
	}
	return &memLock{}
}

// acquire waits until tryLocked grants, or ctx ends.
func (m *Memory) acquire(ctx context.Context, owner string, names []string, shared bool) (int64, error) {
	for {
		m.mu.Lock()
		l, token := m.tryLocked(owner, names, shared)
		if l == nil {
			m.mu.Unlock()
			return token, nil
		}
		if l.freed == nil {
			l.freed = make(chan struct{})
		}
		freed, expires := l.freed, l.expires
		m.mu.Unlock()
		var expiry <-chan time.Time
		var t *time.Timer
		if !expires.IsZero() {
			t = time.NewTimer(time.Until(expires) + time.Millisecond)
			expiry = t.C
		}
		select {
		case <-freed:
		case <-expiry:
		case <-ctx.Done():
		}
		if t != nil {
			t.Stop()
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
}

// release releases one hold of each name by owner; notowner if owner held one of them not.
func (m *Memory) release(owner string, names []string, shared bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var missing string
	for _, n := range names {
		l := m.locks[n]
		if l != nil {
			m.expire(l, now)
		}
		switch {
		case l != nil && shared && l.readers[owner] > 0:
			if l.readers[owner]--; l.readers[owner] == 0 {
				delete(l.readers, owner)
			}
			l.nread--
		case l != nil && !shared && l.count > 0 && l.owner == owner:
			if l.count--; l.count == 0 {
				l.owner = ""
			}
		default:
			if missing == "" {
				missing = n
			}
			continue
		}
		l.wake()
		if l.count == 0 && l.nread == 0 {
			l.expires = time.Time{}
			delete(m.locks, n) // keep only the held ones
			if len(m.free) < maxFree {
				m.free = append(m.free, l)
			}
		}
	}
	if missing != "" {
		return fmt.Errorf("%w: %s does not hold %s", ErrNotOwner, owner, missing)
	}
	return nil
}

// TryAcquire implements Immediate.
func (m *Memory) TryAcquire(owner, name string) (bool, error) {
	names := [1]string{name}
	m.mu.Lock()
	l, _ := m.tryLocked(owner, names[:], false)
	m.mu.Unlock()
	return l == nil, nil
}

// TryAcquireFenced implements ImmediateFenced.
func (m *Memory) TryAcquireFenced(owner, name string) (bool, int64, error) {
	names := [1]string{name}
	m.mu.Lock()
	l, token := m.tryLocked(owner, names[:], false)
	m.mu.Unlock()
	return l == nil, token, nil
}

// Acquire implements Library.
func (m *Memory) Acquire(ctx context.Context, owner, name string) error {
	_, err := m.acquire(ctx, owner, []string{name}, false)
	return err
}

// Release implements Library.
func (m *Memory) Release(_ context.Context, owner, name string) error {
	names := [1]string{name}
	return m.release(owner, names[:], false)
}

// AcquireRead implements RWLibrary.
func (m *Memory) AcquireRead(ctx context.Context, owner, name string) error {
	_, err := m.acquire(ctx, owner, []string{name}, true)
	return err
}

// ReleaseRead implements RWLibrary.
func (m *Memory) ReleaseRead(_ context.Context, owner, name string) error {
	return m.release(owner, []string{name}, true)
}

// AcquireWrite implements RWLibrary: the write lock is the mutex of the same name.
func (m *Memory) AcquireWrite(ctx context.Context, owner, name string) error {
	return m.Acquire(ctx, owner, name)
}

// ReleaseWrite implements RWLibrary.
func (m *Memory) ReleaseWrite(ctx context.Context, owner, name string) error {
	return m.Release(ctx, owner, name)
}

// AcquireMulti implements MultiLibrary: every name at once under one mutex, so two owners
// taking overlapping sets cannot deadlock.
func (m *Memory) AcquireMulti(ctx context.Context, owner string, names []string) error {
	_, err := m.acquire(ctx, owner, names, false)
	return err
}

// ReleaseMulti implements MultiLibrary.
func (m *Memory) ReleaseMulti(_ context.Context, owner string, names []string) error {
	return m.release(owner, names, false)
}

// AcquireFenced implements FencedLibrary: the token is given in the grant's critical section,
// so a later grant always has a greater one.
func (m *Memory) AcquireFenced(ctx context.Context, owner, name string) (int64, error) {
	return m.acquire(ctx, owner, []string{name}, false)
}
