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

// NewPhase returns a phase for the loop; record chooses whether cycles are recorded.
func (l *ClosedLoop) NewPhase(record bool) *Phase {
	p := &Phase{Recorders: make([]*results.Recorder, len(l.Cyclers)), done: make([]paddedCounter, len(l.Cyclers))}
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
			rec, done := p.Recorders[i], &p.done[i]
			for pctx.Err() == nil {
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
