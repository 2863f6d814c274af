package workloads

import (
	"context"
	"sync/atomic"
	"time"
)

// Shared is the checkers' per-key state kept in memory that several processes map (see package
// crosscheck), so that the checker of every process sees the holders of all of them: an
// in-process counter alone cannot see a holder in another process. Each slice has one entry per
// key (Config.Keys); Violations counts the violations of every process together, so whoever
// reads it after the run does not depend on any process reporting its own. The memory is
// written only with atomic operations. It is safe for concurrent use.
type Shared struct {
	// Occupancy is Checker's holders per key.
	Occupancy []atomic.Int32
	// RW is RWChecker's readers + writers*2^32 per key.
	RW []atomic.Int64
	// Tokens is FenceChecker's highest token observed per key.
	Tokens []atomic.Int64
	// Violations counts the violations of every process that maps the memory.
	Violations *atomic.Int64
}

// fits reports whether s has room for keys keys.
func (s *Shared) fits(keys int) bool {
	return s != nil && s.Violations != nil && len(s.Occupancy) >= keys && len(s.RW) >= keys && len(s.Tokens) >= keys
}

// checker returns the holder checker for the config: on the shared state when there is one.
func (c *Config) checker() *Checker {
	if s := c.Shared; s.fits(c.Keys) {
		return &Checker{occupancy: s.Occupancy[:c.Keys], shared: s.Violations, referee: c.Referee}
	}
	ch := NewChecker(c.Keys)
	ch.referee = c.Referee
	return ch
}

// rwChecker returns the read-write checker for the config: on the shared state when there is one.
func (c *Config) rwChecker() *RWChecker {
	if s := c.Shared; s.fits(c.Keys) {
		return &RWChecker{state: s.RW[:c.Keys], shared: s.Violations, referee: c.Referee}
	}
	ch := NewRWChecker(c.Keys)
	ch.referee = c.Referee
	return ch
}

// fenceChecker returns the fencing checker for the config: on the shared state when there is one.
func (c *Config) fenceChecker() *FenceChecker {
	if s := c.Shared; s.fits(c.Keys) {
		return &FenceChecker{last: s.Tokens[:c.Keys], shared: s.Violations}
	}
	return NewFenceChecker(c.Keys)
}

// countShared adds one violation to the shared count, when there is one.
func countShared(shared *atomic.Int64) {
	if shared != nil {
		shared.Add(1)
	}
}

// waitUntil blocks until t (no wait when t is zero or past) or until ctx ends, and reports
// whether t was reached.
func waitUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if t.IsZero() || d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
