package adapter

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/lockbench/lockbench/extdriver"
)

// Memory is a reentrant lock in the adapter's memory, with leases: no Redis, so that an adapter
// driving it (adapters/null) costs lockbench only the protocol. It keeps the rules a real
// library must (exclusion, non-owner release refused, wait limits, lease expiry), so that it
// passes driver-check. Safe for concurrent use.
type Memory struct {
	lease time.Duration
	mu    sync.Mutex
	locks map[string]*memLock
}

type memLock struct {
	owner   string
	count   int
	expires time.Time     // zero: no lease
	freed   chan struct{} // closed and replaced at each release
}

var _ Library = (*Memory)(nil)

// NewMemory returns an empty Memory whose grants last lease (0: until released).
func NewMemory(lease time.Duration) *Memory {
	return &Memory{lease: lease, locks: map[string]*memLock{}}
}

// Hello implements Library.
func (m *Memory) Hello() extdriver.Hello {
	return extdriver.Hello{Library: "lockbench null adapter (in-memory lock, no Redis)", Version: "1",
		Language: runtime.Version(), Kinds: []string{"mutex", "reentrant"}}
}

// Acquire implements Library.
func (m *Memory) Acquire(ctx context.Context, owner, name string) error {
	for {
		m.mu.Lock()
		l := m.locks[name]
		if l == nil {
			l = &memLock{freed: make(chan struct{})}
			m.locks[name] = l
		}
		now := time.Now()
		if l.count > 0 && !l.expires.IsZero() && now.After(l.expires) {
			l.count, l.owner = 0, "" // the lease ran out
		}
		if l.count == 0 || l.owner == owner {
			l.owner = owner
			l.count++
			if m.lease > 0 {
				l.expires = now.Add(m.lease)
			}
			m.mu.Unlock()
			return nil
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
			return err
		}
	}
}

// Release implements Library.
func (m *Memory) Release(_ context.Context, owner, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.locks[name]
	if l == nil || l.count == 0 || l.owner != owner || !l.expires.IsZero() && time.Now().After(l.expires) {
		return fmt.Errorf("%w: %s does not hold %s", ErrNotOwner, owner, name)
	}
	l.count--
	if l.count == 0 {
		l.owner = ""
		close(l.freed)
		l.freed = make(chan struct{})
		delete(m.locks, name) // a benchmark's keys come and go: keep only the held ones
	}
	return nil
}
