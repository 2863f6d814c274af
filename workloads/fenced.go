package workloads

import "sync/atomic"

// FenceChecker checks fencing tokens without trusting the lock: a worker passes each grant's
// token to Observe inside its critical section, and a token that is not above every token seen
// before for the key is a fencing violation. A protected resource would have turned that holder
// away: the lock granted out of token order, or a holder whose lease had run out came back after
// a later grant. Its violations are safety violations, not errors: a run counts them in
// Violations and FencingViolations (see Safety). It sees the holders of this process only, unless its last tokens are in
// memory other processes share (Config.Shared). It is
// safe for concurrent use.
type FenceChecker struct {
	last       []atomic.Int64
	violations atomic.Int64
	shared     *atomic.Int64 // every process's violations, with Config.Shared; else nil
}

// NewFenceChecker returns a checker for keys lock names.
func NewFenceChecker(keys int) *FenceChecker {
	return &FenceChecker{last: make([]atomic.Int64, keys)}
}

// Observe records token as the latest grant of key. It counts a violation and reports false if
// token is not strictly above the highest token observed for key so far.
func (c *FenceChecker) Observe(key int, token int64) bool {
	for {
		prev := c.last[key].Load()
		if token <= prev {
			c.violations.Add(1)
			countShared(c.shared)
			return false
		}
		if c.last[key].CompareAndSwap(prev, token) {
			return true
		}
	}
}

// Violations returns the fencing violations seen so far.
func (c *FenceChecker) Violations() int64 { return c.violations.Load() }
