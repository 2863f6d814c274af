package workloads

import "github.com/lockbench/lockbench/results"

// Referee is a safety checker outside this process that every process of a run shares, wherever
// it runs (package referee): the checkers tell it of every holder entering and leaving its
// critical section, inside that section, and it counts a second holder of a lock as a violation.
// It sees what shared memory cannot: processes on other machines. Its methods are called by
// many workers at once and must be safe for concurrent use; they do not fail (a referee that
// does not answer counts its own errors) and must return in bounded time.
type Referee interface {
	// Enter marks worker as a holder of key, shared (a reader) or not.
	Enter(key, worker int, shared bool)
	// Exit clears worker's mark on key, and no other.
	Exit(key, worker int)
}

// checkers names the safety checkers of a run of cfg (results.Run.Checkers).
func (c *Config) checkers() []string {
	out := []string{results.CheckerInProcess}
	if c.Shared.fits(c.Keys) {
		out = append(out, results.CheckerSharedMemory)
	}
	if c.Referee != nil {
		out = append(out, results.CheckerReferee)
	}
	return out
}
