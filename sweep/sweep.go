package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Defaults for Options, written down once.
const (
	// DefaultSaturationMargin: a step is saturated when its throughput falls more than 5% short
	// (of the target rate, or of the best earlier step's throughput in a concurrency sweep).
	// Less would call a loaded machine's noise saturation; more would let a backlog pass. A
	// concurrency sweep compares two noisy measurements, so there a driver stops only at the
	// second saturated step in a row.
	DefaultSaturationMargin = 0.05
	// DefaultStopFactor: a driver stops stepping once its SLO percentile is above 4 × the
	// limit. A step just over the limit may be noise and the next one may pass again; four
	// times over is a queue, and higher loads only lengthen it.
	DefaultStopFactor = 4
)

// ErrAbort, wrapped by an error of Options.Step, ends the whole sweep at once (a configuration
// the workload refuses, say): Run returns that error with what was measured before.
var ErrAbort = errors.New("sweep aborted")

// Step is one step of one driver, as Options.Step and Options.Progress see it. It is a plain
// value.
type Step struct {
	Driver string
	// Index is 1-based: Loads[Index-1] is Load.
	Index int
	Load  float64
	// Seq counts the runs of the sweep, 1-based; Total is its upper bound (every step of every
	// driver still stepping), which falls as drivers stop early.
	Seq, Total int
}

// Event reports progress: a step starting (Done false) or finished (Done true, with Result
// and StopReason). It is a plain value.
type Event struct {
	Step Step
	Done bool
	// Result is the finished step's record.
	Result results.SweepStep
	// StopReason is why the driver takes no further step, or "".
	StopReason string
	// Elapsed is the time since the sweep began; Remaining an estimate of the time left if
	// every driver still stepping runs every step left (the mean wall time of the steps so
	// far, or Options.StepTime before the first ends, times the steps left).
	Elapsed, Remaining time.Duration
}

// Options configure Run. Mode, Loads, Drivers, SLO and Step are required.
type Options struct {
	// Mode is results.SweepRate or results.SweepConcurrency.
	Mode string
	// Loads are the steps, ascending (see CheckLoads, GeometricLoads).
	Loads []float64
	// Drivers are stepped interleaved: each load runs on every driver still stepping before
	// the next load, so that drift of a shared machine does not favour one driver.
	Drivers []string
	SLO     SLO
	// SaturationMargin is in [0, 1); 0 means DefaultSaturationMargin.
	SaturationMargin float64
	// StopFactor is at least 1; 0 means DefaultStopFactor.
	StopFactor float64
	// Step runs one step: a full run (warm-up, measured phase, checker) of s.Driver at
	// s.Load. An error wrapping drivers.ErrUnsupported skips the driver (no further steps);
	// one wrapping ErrAbort ends the sweep; any other error fails the step, and the driver
	// stops. It is called from Run's goroutine, one step at a time.
	Step func(ctx context.Context, s Step) (results.Run, error)
	// Progress, if set, is told when each step starts and ends, from Run's goroutine.
	Progress func(Event)
	// StepTime is a guess of one step's wall time (warm-up plus duration plus set-up), for
	// the remaining time before the first step has ended.
	StepTime time.Duration
	// Duration is each step's planned measured phase, against which a step stopped early
	// past the SLO (results.Run.Aborted) counts the time it saved. 0: not counted.
	Duration time.Duration
}

// Outcome is what a sweep measured. It is a plain value.
type Outcome struct {
	// Runs are the steps' runs in the order they ran; Sweep's steps index them.
	Runs  []results.Run
	Sweep results.Sweep
	// Failed is true when a step failed (errors, safety violations, or it could not run).
	Failed bool
}

func (o *Options) fill() error {
	if o.SaturationMargin == 0 {
		o.SaturationMargin = DefaultSaturationMargin
	}
	if o.StopFactor == 0 {
		o.StopFactor = DefaultStopFactor
	}
	switch {
	case !(o.SaturationMargin > 0 && o.SaturationMargin < 1):
		return badInput("saturation margin %v: want above 0 and below 1", o.SaturationMargin)
	case !(o.StopFactor >= 1) || math.IsInf(o.StopFactor, 0):
		return badInput("stop factor %v: want at least 1", o.StopFactor)
	case len(o.Drivers) == 0:
		return badInput("no drivers")
	case o.Step == nil:
		return badInput("no step function")
	case !(o.SLO.Percentile > 0 && o.SLO.Percentile < 100) || o.SLO.Limit <= 0:
		return badInput("SLO %v: want a percentile in (0, 100) and a positive limit", o.SLO)
	}
	return CheckLoads(o.Mode, o.Loads)
}

// driverState is one driver's progress through the steps.
type driverState struct {
	rec     results.SweepDriver
	stopped bool
	best    float64 // highest throughput of a finished step
}

// Run steps the load up as o says and returns what was measured. When ctx ends, the step
// running is kept (marked incomplete by the step function) and no further step starts; the
// drivers' records say "interrupted". The error is non-nil for bad options (wrapping
// ErrBadInput; nothing ran) or a step that wrapped ErrAbort (the outcome holds the steps
// before it).
func Run(ctx context.Context, o Options) (*Outcome, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	out := &Outcome{Sweep: results.Sweep{
		Mode:             o.Mode,
		Loads:            append([]float64(nil), o.Loads...),
		SLO:              results.SweepSLO{Name: o.SLO.Name, Percentile: o.SLO.Percentile, LimitUS: float64(o.SLO.Limit) / float64(time.Microsecond)},
		SaturationMargin: o.SaturationMargin,
		StopFactor:       o.StopFactor,
	}}
	states := make([]*driverState, len(o.Drivers))
	for i, d := range o.Drivers {
		states[i] = &driverState{rec: results.SweepDriver{Driver: d, Steps: []results.SweepStep{}}}
	}
	defer func() {
		for _, s := range states {
			s.rec.KneeStep, s.rec.KneeLoad = knee(s.rec.Steps)
			out.Sweep.Drivers = append(out.Sweep.Drivers, s.rec)
		}
	}()

	start := time.Now()
	var stepWall time.Duration // summed over finished steps
	finished, seq := 0, 0
	left := func() int { // steps not yet run by drivers still stepping
		n := 0
		for _, s := range states {
			if !s.stopped {
				n += len(o.Loads) - len(s.rec.Steps)
			}
		}
		return n
	}
	remaining := func() time.Duration {
		per := o.StepTime
		if finished > 0 {
			per = stepWall / time.Duration(finished)
		}
		return per * time.Duration(left())
	}
	for i, load := range o.Loads {
		for _, s := range states {
			if s.stopped {
				continue
			}
			if ctx.Err() != nil {
				stopAll(states, "interrupted before step "+fmt.Sprint(i+1))
				return out, nil
			}
			seq++
			step := Step{Driver: s.rec.Driver, Index: i + 1, Load: load, Seq: seq, Total: seq - 1 + left()}
			if o.Progress != nil {
				o.Progress(Event{Step: step, Elapsed: time.Since(start), Remaining: remaining()})
			}
			began := time.Now()
			run, err := o.Step(ctx, step)
			stepWall += time.Since(began)
			finished++

			var rec results.SweepStep
			var stop string
			switch {
			case errors.Is(err, ErrAbort):
				return out, err
			case errors.Is(err, drivers.ErrUnsupported):
				s.stopped, s.rec.StoppedEarly, s.rec.StopReason = true, true, "skipped: "+skipText(err)
				continue
			case err != nil && ctx.Err() != nil:
				// Cut short by the interrupt, not broken.
				rec = results.SweepStep{Load: load, Run: -1, Verdict: results.VerdictIncomplete, Reason: "interrupted: " + err.Error()}
				stop = rec.Reason
			case err != nil:
				out.Failed = true
				rec = results.SweepStep{Load: load, Run: -1, Verdict: results.VerdictFailed, Reason: err.Error()}
				stop = rec.Reason
			default:
				prev := ""
				if n := len(s.rec.Steps); n > 0 {
					prev = s.rec.Steps[n-1].Verdict
				}
				rec, stop = o.judge(load, &run, s.best, prev)
				rec.Run = len(out.Runs)
				out.Runs = append(out.Runs, run)
				out.Failed = out.Failed || rec.Verdict == results.VerdictFailed
				if rec.Verdict != results.VerdictIncomplete {
					s.best = max(s.best, run.ThroughputPerS)
				}
			}
			rec.Step = i + 1
			s.rec.Steps = append(s.rec.Steps, rec)
			if stop != "" {
				s.stopped = true
				if i+1 < len(o.Loads) {
					s.rec.StoppedEarly = true
				}
				s.rec.StopReason = fmt.Sprintf("step %d: %s", i+1, stop)
			}
			if o.Progress != nil {
				o.Progress(Event{Step: step, Done: true, Result: rec, StopReason: stop, Elapsed: time.Since(start), Remaining: remaining()})
			}
		}
	}
	if ctx.Err() != nil {
		// The last step ran into the interrupt; its record says so already.
		for _, s := range states {
			if !s.stopped {
				s.stopped, s.rec.StopReason = true, "interrupted"
			}
		}
	}
	return out, nil
}

// stopAll stops every driver still stepping, for reason.
func stopAll(states []*driverState, reason string) {
	for _, s := range states {
		if !s.stopped {
			s.stopped, s.rec.StoppedEarly, s.rec.StopReason = true, true, reason
		}
	}
}

// knee is the highest step with VerdictOK (its 1-based index and load), or 0, 0.
//
// The highest, not the last before the first failure: on a shared machine one noisy step may
// go over and the next come back under; WriteSummary notes such a dip below the knee.
func knee(steps []results.SweepStep) (int, float64) {
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Verdict == results.VerdictOK {
			return steps[i].Step, steps[i].Load
		}
	}
	return 0, 0
}

// skipText is a skip error's reason without the sentinel's text in front.
func skipText(err error) string {
	s := err.Error()
	if i := strings.Index(s, drivers.ErrUnsupported.Error()+": "); i >= 0 {
		return s[i+len(drivers.ErrUnsupported.Error())+2:]
	}
	return s
}
