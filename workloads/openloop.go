package workloads

import (
	"context"
	"runtime/trace"
	"strconv"
	"sync"
	"time"

	"github.com/lockbench/lockbench/pacing"
	"github.com/lockbench/lockbench/results"
)

// OpenLoop is the open-loop pacer: attempts start on an arrival schedule (see package pacing) at
// Rate acquisitions/s summed over all workers, whether or not earlier attempts have finished.
// The workers are the cap on attempts in flight: a free worker takes the next slot of the one
// schedule they share and waits for its intended start. Each phase has a schedule of its own,
// starting with the phase.
//
// Recorders measure the acquire latency from the intended start, so a stall shows in every
// attempt that arrived during it (coordinated-omission correction, as wrk2 does), and beside it
// the service time, from the actual start (see results.NewOpenLoopRecorder).
//
// When every worker is busy, the schedule is not slowed down; instead (see OpenStats):
//   - late: a slot that no worker was free to take by its intended start (LateGrace after it).
//     It starts as soon as a worker frees up, behind schedule, and its latency includes the
//     wait.
//   - dropped: a slot intended before the phase's end that no worker was free to start before
//     then. It is in no histogram: only the count says it was missed.
//
// An attempt behind schedule is never skipped for being too far behind: skipping it would take
// out of the histograms exactly the waits the correction is for.
//
// Free workers take slots ahead of time and wait for them, so a worker that is late only because
// the machine did not run it in time (a loaded CPU) starts late without counting as late; its
// latency, from the intended start, still includes the delay. A generator stalled for longer
// than the workers' lead (the concurrency over the rate, less the attempts in flight) counts
// late starts like a server would: either way the schedule was not kept.
// A slot taken on time always starts, even when its worker wakes after the phase's end.
//
// It is safe for concurrent use.
type OpenLoop struct {
	// Cyclers are the workers, one goroutine each; their number caps the attempts in flight.
	Cyclers []Cycler
	// Rate is the target in acquisitions/s, over all workers.
	Rate float64
	// Arrival is pacing.Uniform or pacing.Poisson ("" means pacing.DefaultArrival).
	Arrival string
	// Seed fixes a Poisson schedule.
	Seed int64
}

// LateGrace is how long after its intended start a slot may be taken by a worker before it
// counts as late: the time it takes to hand a slot to a worker that just became free, which is
// the generator's jitter, not the cap.
const LateGrace = time.Millisecond

// OpenDrain is how long after an open-loop phase the attempts it started may go on; the closed
// loop cuts them at once. It is the bound, not a wait: a phase ends when its last attempt does.
const OpenDrain = time.Second

// startLead is how long after the workers are launched a phase's schedule starts.
const startLead = 10 * time.Millisecond

// OpenStats is an open-loop phase's account of its schedule. It is a plain value.
type OpenStats struct {
	// Window is how much of the schedule ran: the planned duration, or less when the phase was
	// interrupted. Late and Dropped count slots intended inside it.
	Window time.Duration
	// Started counts the attempts that started, late ones included.
	Started int64
	// Late counts attempts that started after their intended start because every worker was
	// busy when it came (see OpenLoop).
	Late int64
	// Dropped counts slots that no worker was free to start before the phase ended.
	Dropped int64
	// Waits are what the workers' waits for their slots took (pacing.WaitCounts), and
	// SpinTime the CPU time they spent polling the clock: the pacer's own cost, in counts
	// that a loaded machine does not move as it moves times.
	Waits    pacing.WaitCounts
	SpinTime time.Duration
}

// NewPhase returns a phase for the loop; record chooses whether cycles are recorded.
func (l *OpenLoop) NewPhase(record bool) *Phase {
	p := newPhase(len(l.Cyclers))
	if record {
		for i := range p.Recorders {
			p.Recorders[i] = results.NewOpenLoopRecorder()
		}
	}
	return p
}

// Run drives the cyclers on the schedule for d or until ctx ends, whichever is first, waits for
// all of them and sets p.Open. The configuration was checked (Config.Validate): a rate or arrival
// the schedule refuses leaves the phase empty.
func (l *OpenLoop) Run(ctx context.Context, p *Phase, d time.Duration) {
	sched, err := pacing.New(l.Rate, l.Arrival, l.Seed)
	if err != nil {
		p.Open = &OpenStats{}
		return
	}
	// The schedule starts startLead after the workers are launched, so that they are waiting
	// for the first slots rather than the first slots for them.
	start := time.Now().Add(startLead)
	pctx, cancel := context.WithDeadline(ctx, start.Add(d))
	defer cancel()
	// Attempts that started in time may finish, for up to OpenDrain after the phase, so that
	// the acquisitions are those of the slots started: the achieved rate then says what was
	// served of the schedule, not how many attempts the end cut short. An interrupt cuts them.
	cctx, cancelCycles := context.WithDeadline(ctx, start.Add(d+OpenDrain))
	defer cancelCycles()
	// The window ends when pctx does: at d, or at the interrupt.
	var ended time.Duration
	endedSet := make(chan struct{})
	stopEnded := context.AfterFunc(pctx, func() {
		ended = time.Since(start)
		close(endedSet)
	})
	counts := make([]openCounts, len(l.Cyclers))
	// The workers' last microseconds before a slot are spent polling the clock, within one
	// budget for the phase so that the spin never takes more than a sliver of a CPU from Redis.
	spin := pacing.NewSpinBudget(pacing.DefaultSpinShare, pacing.DefaultSpinWindow)
	var wg sync.WaitGroup
	for i, cy := range l.Cyclers {
		wg.Go(func() {
			l.work(pctx, cctx, sched, spin, start, d, cy, p.Recorders[i], &p.done[i], &counts[i], &p.started[i], &p.late[i])
		})
	}
	wg.Wait()
	p.Elapsed = time.Since(start)
	p.Interrupted = ctx.Err() != nil
	window := d
	// Workers also stop when the schedule runs past d, which may be before pctx ends.
	if !stopEnded() {
		<-endedSet
		window = min(max(ended, 0), d) // an interrupt in the lead leaves no window
	}
	st := OpenStats{Window: window}
	st.SpinTime, _ = spin.Spent()
	for _, c := range counts {
		st.Started += c.started
		st.Late += c.late
		st.Waits = st.Waits.Add(c.waits)
		if c.unstarted >= 0 && c.unstarted < window {
			st.Dropped++
		}
	}
	// The slots still unclaimed were intended while every worker was busy to the end.
	st.Dropped += sched.Skip(window)
	p.Open = &st
}

// openCounts is one worker's share of OpenStats, padded like paddedCounter.
type openCounts struct {
	started, late int64
	// unstarted is the offset of a slot the worker took late and could not start before the
	// phase ended; -1 when none.
	unstarted time.Duration
	waits     pacing.WaitCounts
	_         [8]byte
}

// work is one worker of Run: take the next slot, wait for its time, run the cycle in cctx, until
// the schedule passes d or ctx ends.
func (l *OpenLoop) work(ctx, cctx context.Context, sched *pacing.Schedule, spin *pacing.SpinBudget, start time.Time, d time.Duration, cy Cycler, rec *results.Recorder, done *paddedCounter, c *openCounts, started, lateN *paddedCounter) {
	c.unstarted = -1
	// A precise wait (pacing.Waiter): a Go timer alone wakes an idle generator up to a
	// millisecond late, and that delay, counted from the intended start, would read as the
	// lock's latency.
	w := pacing.NewWaiter(spin)
	defer func() {
		c.waits = w.Counts()
		w.Close()
	}()
	for {
		at := sched.Next()
		if at >= d {
			return // the rest of the schedule is past the phase
		}
		intended := start.Add(at)
		now := time.Now()
		late := now.Sub(intended) > LateGrace
		if intended.After(now) {
			var ok bool
			// The actual start: after the wake-up, however late it came.
			if now, ok = w.Wait(cctx, intended); !ok {
				// Interrupted while waiting for its time: not dropped, the cap did not
				// keep it from starting.
				return
			}
		}
		// A slot taken on time starts even if the timer woke its worker just after the
		// phase's end (Go rounds short timer waits up to a millisecond): it was due inside
		// the phase and a worker was waiting for it. One taken late after the end was not
		// started because every worker was busy until then: dropped.
		switch {
		case late && ctx.Err() != nil:
			c.unstarted = at
			return
		case cctx.Err() != nil:
			return
		}
		c.started++
		started.Add(1)
		if late {
			c.late++
			lateN.Add(1)
		}
		if trace.IsEnabled() {
			// For the per-phase breakdown of an attempt (BenchmarkOpenLoopLight with
			// LOCKBENCH_TRACE, scripts/trace-phases.py): its intended start, as the lag of the
			// actual start behind it.
			trace.Log(cctx, "lockbench", "slot lag_ns="+strconv.FormatInt(int64(now.Sub(intended)), 10))
		}
		if rec != nil {
			rec.StartedLate(now.Sub(intended))
			if !late {
				// The generator's own delay; a late slot's wait for a free worker is
				// counted in Late, not here.
				rec.ScheduleLag(now.Sub(intended))
			}
		}
		if cy.Cycle(cctx, rec) != nil {
			return
		}
		done.Add(1)
	}
}

// pacer is a loop Run drives through its phases: the ClosedLoop or the OpenLoop.
type pacer interface {
	NewPhase(record bool) *Phase
	Run(ctx context.Context, p *Phase, d time.Duration)
}

// newPacer returns the open loop when cfg has a rate, else the closed loop, over cyclers.
func newPacer(cfg *Config, cyclers []Cycler) pacer {
	if cfg.Rate > 0 {
		return &OpenLoop{Cyclers: cyclers, Rate: cfg.Rate, Arrival: cfg.Arrival, Seed: cfg.Seed}
	}
	return &ClosedLoop{Cyclers: cyclers}
}

// setPacing sets the run's pacing and, for an open loop, its arrival and target rate: what was
// asked for, set even for a run that never measures.
func setPacing(run *results.Run, cfg *Config) {
	run.Pacing = results.PacingClosed
	if cfg.Rate > 0 {
		run.Pacing, run.Arrival, run.TargetRate = results.PacingOpen, cfg.Arrival, cfg.Rate
	}
}

// recordPacing sets what an open loop's measured phase ph did with its schedule; nothing for a
// closed loop. Call it after Run.Fill.
func recordPacing(run *results.Run, cfg *Config, ph *Phase) {
	if o := ph.Open; o != nil {
		run.SetOpenLoop(cfg.Arrival, cfg.Rate, o.Window, o.Late, o.Dropped)
	}
}
