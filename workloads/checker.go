package workloads

import "sync/atomic"

// Checker detects two holders of one lock at once without trusting the lock: every worker marks
// a per-key occupancy counter on entering and leaving its critical section, and a counter above
// one is a mutual-exclusion violation. It sees the holders of this process only, unless its
// counters are in memory other processes share (Config.Shared). It is safe for
// concurrent use.
type Checker struct {
	occupancy  []atomic.Int32
	violations atomic.Int64
	shared     *atomic.Int64 // every process's violations, with Config.Shared; else nil
	referee    Referee       // told of every holder, with Config.Referee; else nil
}

// NewChecker returns a checker for keys lock names.
func NewChecker(keys int) *Checker {
	return &Checker{occupancy: make([]atomic.Int32, keys)}
}

// Enter marks worker as a holder of key; it counts a violation if another holder is inside.
func (c *Checker) Enter(key, worker int) {
	if c.occupancy[key].Add(1) != 1 {
		c.violations.Add(1)
		countShared(c.shared)
	}
	if c.referee != nil {
		c.referee.Enter(key, worker, false)
	}
}

// Exit unmarks worker as a holder of key.
func (c *Checker) Exit(key, worker int) {
	if c.referee != nil {
		c.referee.Exit(key, worker)
	}
	c.occupancy[key].Add(-1)
}

// Violations returns the violations seen so far.
func (c *Checker) Violations() int64 { return c.violations.Load() }
