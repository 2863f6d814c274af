package workloads

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Live is a measured phase as it runs, handed to Plan.Live once per timeline interval and once
// more when the phase ends: what a Prometheus endpoint exports and what thresholds that stop a
// run look at. Counts are totals since the measured phase began (violations: since the run
// began, warm-up included, as in the result). It is not safe for concurrent use, and its
// histograms are valid only during the call.
type Live struct {
	// Driver is the driver's name, as in the result.
	Driver string
	// Elapsed is the time since the measured phase began.
	Elapsed time.Duration
	// Final is true for the call made once the phase's workers have stopped.
	Final bool
	// Acquire and Cycle are the acquire and cycle latencies so far, in microseconds.
	Acquire, Cycle *hdrhistogram.Histogram
	// Run is the phase so far as a partial result: acquisitions, throughput, acquire
	// latency percentiles, errors (and by kind) and violations, the figures a threshold can
	// read before the run ends.
	Run results.Run
	// Attempts and FailedAttempts are the driver's own counts (see drivers.CountingLocker);
	// Counted is false for drivers that keep none.
	Attempts, FailedAttempts int64
	Counted                  bool
	// InFlight is the cycles begun and not finished; Late an open loop's late starts so far.
	// Dropped is known only at the end: 0 before the Final call.
	InFlight, Late, Dropped int64
	// RedisCommands is the commands the servers ran since the phase began (INFO commandstats,
	// read once per interval); -1 when the plan measures no server.
	RedisCommands int64
}

// errAborted is the cause of a phase Plan.Live stopped.
var errAborted = errors.New("workloads: aborted by Plan.Live")

// liveWatch feeds Plan.Live during a measured phase.
type liveWatch struct {
	p        Plan
	inst     Instance
	ph       *Phase
	counting drivers.CountingLocker
	before   drivers.Counters
	abort    context.CancelCauseFunc

	acquire, cycle *hdrhistogram.Histogram
	errors         map[string]int64
	reason         string // the first non-empty answer of Plan.Live

	commands atomic.Int64 // -1: not measured
	stop     chan struct{}
	polled   sync.WaitGroup
}

// startLive prepares the watch of a measured phase: samples of timeline reach p.Live, and,
// when the plan measures servers, a poller reads their commands once per interval. abort stops
// the phase. Call stop once the phase has ended.
func startLive(ctx context.Context, p Plan, inst Instance, ph *Phase, counting drivers.CountingLocker, before drivers.Counters,
	timeline *results.TimelineRecorder, stats func(context.Context) (snapshot, error), statsBefore snapshot, statsOK bool, abort context.CancelCauseFunc) *liveWatch {
	w := &liveWatch{p: p, inst: inst, ph: ph, counting: counting, before: before, abort: abort,
		acquire: hdrhistogram.New(results.MinLatencyUS, results.MaxLatencyUS, results.SigFigs),
		cycle:   hdrhistogram.New(results.MinLatencyUS, results.MaxLatencyUS, results.SigFigs),
		errors:  make(map[string]int64), stop: make(chan struct{})}
	w.commands.Store(-1)
	timeline.OnSample(w.sample)
	if statsOK {
		w.commands.Store(0)
		every := p.TimelineInterval
		if every <= 0 {
			every = results.DefaultTimelineInterval
		}
		w.polled.Go(func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-w.stop:
					return
				case <-t.C:
					sctx, cancel := context.WithTimeout(ctx, every)
					after, err := stats(sctx)
					cancel()
					if err == nil {
						var r results.Run
						after.record(&r, statsBefore)
						w.commands.Store(r.RedisCommands)
					}
				}
			}
		})
	}
	return w
}

// stopPolling ends the commands poller; call it before the phase's last server snapshot.
func (w *liveWatch) stopPolling() {
	close(w.stop)
	w.polled.Wait()
}

// sample is the TimelineRecorder's OnSample.
func (w *liveWatch) sample(s results.Sample) {
	w.acquire.Merge(s.Acquire)
	w.cycle.Merge(s.Cycle)
	for k, n := range s.Errors {
		w.errors[k] += n
	}
	l := Live{Driver: w.p.Driver.Name(), Elapsed: s.Elapsed, Final: s.Final, Acquire: w.acquire, Cycle: w.cycle,
		InFlight: w.ph.InFlight(), Late: w.ph.LateSoFar(), RedisCommands: w.commands.Load()}
	if s.Final {
		l.InFlight = 0
	}
	// The figures a threshold reads, as Run.Fill would set them, without encoding histograms.
	l.Run = results.Run{Driver: l.Driver, DurationS: s.Elapsed.Seconds(), Acquisitions: w.acquire.TotalCount(),
		AcquireLatencyUS: results.PercentilesOf(w.acquire), CycleLatencyUS: results.PercentilesOf(w.cycle)}
	if s.Elapsed > 0 {
		l.Run.ThroughputPerS = float64(l.Run.Acquisitions) / s.Elapsed.Seconds()
	}
	for _, n := range w.errors {
		l.Run.Errors += n
	}
	if len(w.errors) > 0 {
		l.Run.ErrorsByKind = maps.Clone(w.errors)
	}
	recordSafety(&l.Run, w.inst)
	if w.counting != nil {
		d := w.counting.Counters().Sub(w.before)
		l.Attempts, l.FailedAttempts, l.Counted = d.Attempts, d.FailedAttempts, true
	}
	if reason := w.p.Live(l); reason != "" && w.reason == "" && !s.Final {
		w.reason = reason
		w.abort(errAborted)
	}
}

// final hands Plan.Live the phase's own account once the run is filled: the dropped slots an
// open loop counts only at its end.
func (w *liveWatch) final(run *results.Run) {
	l := Live{Driver: w.p.Driver.Name(), Elapsed: time.Duration(run.DurationS * float64(time.Second)), Final: true,
		Acquire: w.acquire, Cycle: w.cycle, Run: *run, Late: run.Late, Dropped: run.Dropped, RedisCommands: -1}
	if run.RedisCommands > 0 || w.commands.Load() >= 0 {
		l.RedisCommands = max(run.RedisCommands, w.commands.Load())
	}
	if dc := run.DriverCounts; dc != nil {
		l.Attempts, l.FailedAttempts, l.Counted = dc.Attempts, dc.FailedAttempts, true
	}
	w.p.Live(l)
}
