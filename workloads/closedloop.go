package workloads

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/results"
)

// ClosedLoop is the closed-loop pacer: every worker starts its next cycle as soon as the last one
// ends, for a fixed time. It is safe for concurrent use.
type ClosedLoop struct {
	// Cyclers are the workers, one goroutine each.
	Cyclers []Cycler
}

// Phase is one timed stretch of a closed loop. Done may be read while it runs.
type Phase struct {
	// Recorders has one recorder per worker, or nil entries when not recording.
	Recorders []*results.Recorder
	// Elapsed is from the start until the last worker stopped.
	Elapsed time.Duration
	// Interrupted is true when the parent context ended before the phase's time was up.
	Interrupted bool
	// Open is an open loop's account of its schedule, set when Run returns; nil in a closed loop.
	Open *OpenStats

	done []paddedCounter
	// started counts the cycles begun, per worker, and late an open loop's late starts, so
	// that a live watcher sees the attempts in flight (see InFlight).
	started []paddedCounter
	late    []paddedCounter
}

type paddedCounter struct {
	atomic.Int64
	_ [56]byte // one cache line per worker: workers count without sharing a line
}

// Done returns how many cycles have finished so far.
func (p *Phase) Done() int64 {
	var n int64
	for i := range p.done {
		n += p.done[i].Load()
	}
	return n
}

// InFlight returns how many cycles have begun and not finished so far. It may be read while
// the phase runs.
func (p *Phase) InFlight() int64 {
	var n int64
	for i := range p.started {
		n += p.started[i].Load()
	}
	return max(n-p.Done(), 0)
}

// LateSoFar returns an open loop's late starts so far (see OpenStats.Late); 0 in a closed
// loop. It may be read while the phase runs.
func (p *Phase) LateSoFar() int64 {
	var n int64
	for i := range p.late {
		n += p.late[i].Load()
	}
	return n
}

func newPhase(workers int) *Phase {
	return &Phase{Recorders: make([]*results.Recorder, workers), done: make([]paddedCounter, workers),
		started: make([]paddedCounter, workers), late: make([]paddedCounter, workers)}
}

// NewPhase returns a phase for the loop; record chooses whether cycles are recorded.
func (l *ClosedLoop) NewPhase(record bool) *Phase {
	p := newPhase(len(l.Cyclers))
	if record {
		for i := range p.Recorders {
			p.Recorders[i] = results.NewRecorder()
		}
	}
	return p
}

// Run drives every cycler for d or until ctx ends, whichever is first, and waits for all of them.
func (l *ClosedLoop) Run(ctx context.Context, p *Phase, d time.Duration) {
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for i, cy := range l.Cyclers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec, done, started := p.Recorders[i], &p.done[i], &p.started[i]
			for pctx.Err() == nil {
				started.Add(1)
				if cy.Cycle(pctx, rec) != nil {
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	p.Elapsed = time.Since(start)
	p.Interrupted = ctx.Err() != nil
}
