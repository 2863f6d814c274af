package workloads

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/results"
)

// Stall is a window of the measured phase in which the workers that hold a lock when it starts
// keep it: they stay inside their critical section until it ends, then release as usual, while
// the process, its driver's watchdog and the other workers run on — a slow request handler,
// not a stopped process (lockbench run --fault stall:genN@AT+FOR). Workers that take a lock
// during the window are not stalled. It is a plain value.
type Stall struct {
	// At is when the window starts, from the start of the measured phase; For is how long it
	// lasts, positive. The window must end inside the phase.
	At, For time.Duration
	// Spec and Node name it in the result (results.Fault), e.g. "stall:gen1@3s+2s" and "gen1".
	Spec, Node string
}

// checkStalls returns what is wrong with stalls in a phase of d, or nil.
func checkStalls(stalls []Stall, d time.Duration) error {
	for i, s := range stalls {
		switch {
		case s.At < 0 || s.For <= 0:
			return fmt.Errorf("%w: stall %s at %v for %v: want a time from 0 and a positive duration", ErrBadConfig, s.Spec, s.At, s.For)
		case s.At+s.For > d:
			return fmt.Errorf("%w: stall %s ends at %v, after the measured phase of %v", ErrBadConfig, s.Spec, s.At+s.For, d)
		}
		for _, o := range stalls[i+1:] {
			if s.At < o.At+o.For && o.At < s.At+s.For {
				return fmt.Errorf("%w: stalls %s and %s overlap", ErrBadConfig, s.Spec, o.Spec)
			}
		}
	}
	return nil
}

// stallGate carries out a run's stalls (Plan.Stalls): armed with the start of the measured phase, it keeps a
// worker whose hold ends inside a window it held the lock at the start of until the window
// ends. Its methods are safe for concurrent use; hold costs nothing before it is armed.
type stallGate struct {
	stalls []Stall
	base   time.Time    // monotonic origin of start
	start  atomic.Int64 // the measured phase's start, nanoseconds after base plus one; 0: not armed
	// stalled counts, per window, the workers it kept.
	stalled []atomic.Int64
}

func newStallGate(stalls []Stall) *stallGate {
	return &stallGate{stalls: slices.Clone(stalls), base: time.Now(), stalled: make([]atomic.Int64, len(stalls))}
}

// arm starts the windows' clock at start, the start of the measured phase.
func (g *stallGate) arm(start time.Time) { g.start.Store(max(int64(start.Sub(g.base)), 0) + 1) }

// hold is called by a worker at the end of its hold, still inside its critical section, with the
// instant it was granted the lock. When a window has started since then and not yet ended, the
// worker held its lock at the window's start and stays until the window ends, or ctx does (the
// phase ends, or is interrupted).
func (g *stallGate) hold(ctx context.Context, acquired time.Time) {
	s := g.start.Load()
	if s == 0 {
		return // the warm-up
	}
	start := g.base.Add(time.Duration(s - 1))
	now := time.Now()
	for i, w := range g.stalls {
		at := start.Add(w.At)
		end := at.Add(w.For)
		if !acquired.Before(at) || now.Before(at) || !now.Before(end) {
			continue
		}
		g.stalled[i].Add(1)
		t := time.NewTimer(end.Sub(now))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return // windows do not overlap (checkStalls)
	}
}

// record adds one results.Fault per window to run, for a measured phase that lasted elapsed: a
// window the phase reached fired at its time, and lasted until its end or the phase's.
func (g *stallGate) record(run *results.Run, elapsed time.Duration) {
	for i, w := range g.stalls {
		f := results.Fault{Spec: w.Spec, Action: "stall", Node: w.Node, AtS: w.At.Seconds(), ForS: w.For.Seconds()}
		if elapsed > w.At {
			f.Fired, f.FiredS = true, w.At.Seconds()
			f.LastedS = min(w.For, elapsed-w.At).Seconds()
			n := g.stalled[i].Load()
			f.StalledWorkers = &n
		}
		run.Faults = append(run.Faults, f)
	}
}
