package workloads

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// newShared is shared checker state in ordinary memory: two instances given it stand for two
// processes that map one arena (package crosscheck tests the mapping itself).
func newShared(keys int) *Shared {
	return &Shared{
		Occupancy:  make([]atomic.Int32, keys),
		RW:         make([]atomic.Int64, keys),
		Tokens:     make([]atomic.Int64, keys),
		Violations: new(atomic.Int64),
	}
}

func TestCheckersOnSharedStateSeeEachOther(t *testing.T) {
	s := newShared(4)
	cfg := Config{Keys: 4, Shared: s}
	a, b := cfg.checker(), cfg.checker() // one per "process"
	a.Enter(2, 0)
	b.Enter(2, 0) // a holder in the other process: a violation only shared state can see
	b.Exit(2, 0)
	a.Exit(2, 0)
	if a.Violations() != 0 || b.Violations() != 1 {
		t.Errorf("own violations a=%d b=%d, want 0 and 1 (counted by who entered second)", a.Violations(), b.Violations())
	}
	if got := s.Violations.Load(); got != 1 {
		t.Errorf("shared violations = %d, want 1", got)
	}

	ra, rb := cfg.rwChecker(), cfg.rwChecker()
	ra.EnterRead(1, 0)
	rb.EnterWrite(1, 0)
	if got := s.Violations.Load(); got != 2 {
		t.Errorf("shared violations after a writer met a reader of the other process = %d, want 2", got)
	}

	fa, fb := cfg.fenceChecker(), cfg.fenceChecker()
	fa.Observe(3, 10)
	if fb.Observe(3, 9) {
		t.Error("token 9 after the other process's 10 passed")
	}
	if got := s.Violations.Load(); got != 3 {
		t.Errorf("shared violations after a fencing violation = %d, want 3", got)
	}
}

func TestSharedTooSmallFallsBackToPrivate(t *testing.T) {
	s := newShared(2)
	cfg := Config{Keys: 4, Shared: s}
	c := cfg.checker()
	c.Enter(3, 0) // beyond the shared slices: must not panic
	c.Enter(3, 0)
	if c.Violations() != 1 || s.Violations.Load() != 0 {
		t.Errorf("private checker: own %d shared %d, want 1 and 0", c.Violations(), s.Violations.Load())
	}
}

func TestWaitUntil(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if !waitUntil(ctx, time.Time{}) || !waitUntil(ctx, time.Now().Add(-time.Second)) {
		t.Error("a zero or past start time must not wait")
	}
	if !waitUntil(ctx, time.Now().Add(20*time.Millisecond)) {
		t.Error("a near start time was not reached")
	}
	cancel()
	if waitUntil(ctx, time.Now().Add(time.Hour)) {
		t.Error("an ended context reached a start time an hour away")
	}
}
