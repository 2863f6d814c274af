package sweep

import (
	"context"
	"errors"
	"fmt"
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

// Defaults of lockbench sweep for the repeated, refined sweep (Options' zero values keep one
// run per step and no refinement).
const (
	// DefaultRounds: each step runs 3 times before it is decided, the fewest whose range is a
	// confidence interval worth the name (75%, see DefaultConfidence).
	DefaultRounds = 3
	// DefaultMaxRounds: an uncertain step gets up to 6 rounds in all; at 6 the interval drops
	// the highest and lowest round.
	DefaultMaxRounds = 6
	// DefaultPrecision: the knee's bracket is refined until its upper load is within 5% of
	// its lower one.
	DefaultPrecision = 0.05
	// DefaultBudget bounds the refinement's time.
	DefaultBudget = 10 * time.Minute
	// DefaultFloorShare: the noise floor is measured at 5% of the first rate step.
	DefaultFloorShare = 0.05
)

// Step is one run of one driver, as Options.Step and Options.Progress see it: a round of a
// grid step, of a refined step, or the noise floor. It is a plain value.
type Step struct {
	Driver string
	// Index is the step's 1-based number: Loads[Index-1] is Load for a grid step; a refined
	// step is numbered on after the grid; 0 for the noise floor.
	Index int
	Load  float64
	// Refined marks a step the refinement added; Floor the noise floor's run.
	Refined, Floor bool
	// Round is the run's 1-based round of its step.
	Round int
	// Seq counts the runs of the sweep, 1-based; Total is an estimate of their number (every
	// step left of every driver still stepping, at Options.Rounds each), which changes as
	// drivers stop early, steps need more rounds, or the refinement adds steps.
	Seq, Total int
}

// Event reports progress: a run starting (Done false) or finished (Done true). When a step is
// decided, Decided is true, with Result and StopReason. It is a plain value.
type Event struct {
	Step Step
	Done bool
	// Run is a finished run's result (Done, not Decided); nil when it could not run.
	Run *results.Run
	// Decided is true on the end of a step's last round: Result is then the step's record.
	Decided bool
	// Result is the decided step's record.
	Result results.SweepStep
	// StopReason is why the driver takes no further grid step, or "".
	StopReason string
	// Elapsed is the time since the sweep began; Remaining the most time left if every driver
	// still stepping runs every grid step left at Options.MaxRounds (the mean wall time of the
	// runs so far, or Options.StepTime before the first ends, times the runs left), plus the
	// refinement's most (see PlanTime) bounded by the budget, less what it used.
	Elapsed, Remaining time.Duration
}

// Options configure Run. Mode, Loads, Drivers, SLO and Step are required.
type Options struct {
	// Mode is results.SweepRate or results.SweepConcurrency.
	Mode string
	// Loads are the steps, ascending (see CheckLoads, GeometricLoads).
	Loads []float64
	// Drivers are stepped interleaved: each load runs on every driver still stepping before
	// the next load, round by round, so that drift of a shared machine does not favour one
	// driver.
	Drivers []string
	SLO     SLO
	// SaturationMargin is in [0, 1); 0 means DefaultSaturationMargin.
	SaturationMargin float64
	// StopFactor is at least 1; 0 means DefaultStopFactor.
	StopFactor float64
	// Rounds is how many runs each step gets before it is decided (0: one, as a sweep without
	// rounds); the verdict is on the rounds' histograms pooled, and with two or more rounds on
	// the confidence interval of the SLO percentile across them (see Interval): within the
	// SLO is ok, above it over, straddling it uncertain. MaxRounds (0: Rounds) is how many an
	// uncertain step may get, one more at a time, before it stays uncertain. At most
	// MaxRoundsLimit.
	Rounds, MaxRounds int
	// Confidence is the least coverage of the interval, in (0, 1); 0 means DefaultConfidence.
	Confidence float64
	// Precision, when above 0, refines each driver's knee after the grid: the load between
	// its highest ok step and the lowest step above that was not ok is bisected (geometric
	// mean for rates, the middle worker count for concurrency) until the upper load is within
	// Precision of the lower one, or Budget (0: no bound) would be passed.
	Precision float64
	Budget    time.Duration
	// FloorShare, when above 0 and in a rate sweep, measures every driver's noise floor
	// before the first step: one run at FloorShare × the first rate, whose SLO percentile
	// within 2 × of the limit draws a warning.
	FloorShare float64
	// Ping, if set, sends one request to the server the drivers use and returns once it is
	// answered (Pinger.Ping). A sweep with a noise floor first times RoundTrips of them one at
	// a time, within RoundTripTime (0: DefaultRoundTrips, DefaultRoundTripTime), and records
	// the raw round trip beside the floor (results.Sweep.RoundTrip): how much of the floor the
	// network and the server take.
	Ping          func(ctx context.Context) error
	RoundTrips    int
	RoundTripTime time.Duration
	// PacedRoundTrips and PacedRoundTripTime bound the paced round trips that follow, per rate
	// (0: DefaultPacedRoundTrips, and DefaultPacedRoundTripTime or Duration if that is shorter;
	// PacedRoundTrips below 0: none): the
	// same requests at the noise floor's rate and the lowest steps' (see PacedIdleGap,
	// MaxPacedRates), one per slot of the open loop's schedule and wait, so that the client and
	// the server idle between them as in a run (results.Sweep.PacedRoundTrips).
	PacedRoundTrips    int
	PacedRoundTripTime time.Duration
	// Step runs one round of a step: a full run (warm-up, measured phase, checker) of
	// s.Driver at s.Load. An error wrapping drivers.ErrUnsupported skips the driver (no
	// further steps); one wrapping ErrAbort ends the sweep; any other error fails the step, and
	// the driver stops. It is called from Run's goroutine, one run at a time.
	Step func(ctx context.Context, s Step) (results.Run, error)
	// Progress, if set, is told when each run starts and ends, from Run's goroutine.
	Progress func(Event)
	// StepTime is a guess of one run's wall time (warm-up plus duration plus set-up), for
	// the remaining time before the first run has ended, and for PlanTime.
	StepTime time.Duration
	// Duration is each run's planned measured phase, against which a step stopped early
	// past the SLO (results.Run.Aborted) counts the time it saved, and which bounds the paced
	// round trips' time. 0: not counted, not bounded.
	Duration time.Duration
	// ProjectCapacity, if set, projects a driver's server-bound capacity (acquisitions/s)
	// from the runs of its knee step, e.g. from Redis CPU per acquisition; 0 when the runs
	// do not tell. The knee's bracket shows it beside the knee.
	ProjectCapacity func(runs []*results.Run) float64

	// clock, if set, stands in for time.Now in tests of the budget and the estimates.
	clock func() time.Time
}

// MaxRoundsLimit bounds Options.MaxRounds, so a typo cannot book the machine for days.
const MaxRoundsLimit = 20

// Outcome is what a sweep measured. It is a plain value.
type Outcome struct {
	// Runs are the runs in the order they ran; Sweep's steps index them.
	Runs  []results.Run
	Sweep results.Sweep
	// Failed is true when a step failed (errors, safety violations, or it could not run).
	Failed bool
}

// Complete reports whether the sweep measured all it ran: no step failed and every run ended
// complete. A sweep interrupted between two runs is complete by this; whether it was
// interrupted is the caller's to add. It is safe for concurrent use.
func (o *Outcome) Complete() bool {
	if o.Failed {
		return false
	}
	for _, run := range o.Runs {
		if !run.Complete {
			return false
		}
	}
	return true
}

// fill sets the defaults of zero values, then validates.
func (o *Options) fill() error {
	if o.SaturationMargin == 0 {
		o.SaturationMargin = DefaultSaturationMargin
	}
	if o.StopFactor == 0 {
		o.StopFactor = DefaultStopFactor
	}
	if o.Rounds == 0 {
		o.Rounds = 1
	}
	if o.MaxRounds == 0 {
		o.MaxRounds = o.Rounds
	}
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if o.Step == nil {
		return badInput("no step function")
	}
	return o.Validate()
}

// driverState is one driver's progress through the steps.
type driverState struct {
	rec     results.SweepDriver
	stopped bool // takes no further grid step
	skipped bool // cannot run the workload at all
	refined string
	runs    map[int][]*results.Run // a step's rounds, by step number, for ProjectCapacity
}

// Run steps the load up as o says and returns what was measured: the noise floor, the grid
// steps, then the refined steps. When ctx ends, the run in progress is kept (marked
// incomplete by the step function) and no further run starts; the drivers' records say
// "interrupted". The error is non-nil for bad options (wrapping ErrBadInput; nothing ran) or a
// step that wrapped ErrAbort (the outcome holds the steps before it).
func Run(ctx context.Context, o Options) (*Outcome, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	plan := PlanTime(o)
	out := &Outcome{Sweep: results.Sweep{
		Mode:             o.Mode,
		Loads:            append([]float64(nil), o.Loads...),
		SLO:              results.SweepSLO{Name: o.SLO.Name, Percentile: o.SLO.Percentile, LimitUS: float64(o.SLO.Limit) / float64(time.Microsecond)},
		SaturationMargin: o.SaturationMargin,
		StopFactor:       o.StopFactor,
		Rounds:           o.Rounds,
		MaxRounds:        o.MaxRounds,
		Precision:        o.Precision,
		BudgetS:          o.Budget.Seconds(),
		PlannedMaxS:      plan.Max.Seconds(),
	}}
	if o.MaxRounds > 1 {
		out.Sweep.Confidence, out.Sweep.IntervalMethod = o.Confidence, IntervalMethod
	}
	sw := &sweeper{o: &o, out: out, now: o.clock, plan: plan}
	if sw.now == nil {
		sw.now = time.Now
	}
	sw.start = sw.now()
	for _, d := range o.Drivers {
		sw.states = append(sw.states, &driverState{rec: results.SweepDriver{Driver: d, Steps: []results.SweepStep{}}, runs: map[int][]*results.Run{}})
	}
	defer sw.finish()

	sw.roundTrip(ctx)
	if err := sw.noiseFloor(ctx); err != nil {
		return out, err
	}
	for i, load := range o.Loads {
		var jobs []*job
		for _, s := range sw.states {
			if !s.stopped {
				jobs = append(jobs, &job{s: s, load: load, index: i + 1})
			}
		}
		if len(jobs) == 0 {
			break
		}
		if ctx.Err() != nil {
			stopAll(sw.states, "interrupted before step "+fmt.Sprint(i+1))
			return out, nil
		}
		sw.gridIndex = i + 1
		if err := sw.runStep(ctx, jobs); err != nil {
			return out, err
		}
	}
	if ctx.Err() != nil {
		// The last step ran into the interrupt; its record says so already.
		for _, s := range sw.states {
			if !s.stopped {
				s.stopped, s.rec.StopReason = true, "interrupted"
			}
		}
		return out, nil
	}
	return out, sw.refine(ctx)
}

// sweeper is one Run's state.
type sweeper struct {
	o      *Options
	out    *Outcome
	states []*driverState
	plan   Plan

	now         func() time.Time
	start       time.Time
	runWall     time.Duration // summed over finished runs
	finished    int
	seq         int
	gridIndex   int           // the grid step running, 1-based
	refining    bool          // the grid is done
	refineStart time.Duration // runWall when the refinement began
}

// perRun is the mean wall time of a run so far, or the guess before the first.
func (sw *sweeper) perRun() time.Duration {
	if sw.finished > 0 {
		return sw.runWall / time.Duration(sw.finished)
	}
	return sw.o.StepTime
}

// gridLeft counts the grid runs, at Rounds each, of the steps after the current one by
// drivers still stepping.
func (sw *sweeper) gridLeft() int {
	if sw.refining {
		return 0
	}
	n := 0
	for _, s := range sw.states {
		if !s.stopped {
			n += (len(sw.o.Loads) - sw.gridIndex) * sw.o.Rounds
		}
	}
	return n
}

// remaining is the most time left: the grid's runs left at MaxRounds (pending, the current
// step's at Rounds, scaled to MaxRounds), and the refinement's most, bounded by the budget,
// less what it has used.
func (sw *sweeper) remaining(pending int) time.Duration {
	o := sw.o
	runs := sw.gridLeft() + pending
	runs = (runs*o.MaxRounds + o.Rounds - 1) / o.Rounds
	refine := sw.plan.Refine
	if o.Budget > 0 {
		refine = min(refine, o.Budget+sw.perRun())
	}
	if sw.refining {
		refine = max(refine-(sw.runWall-sw.refineStart), 0)
	}
	return sw.perRun()*time.Duration(runs) + refine
}

// call runs one run of step, timing it and telling Progress of its start and end; pending is
// the runs left of the current step, this one included.
func (sw *sweeper) call(ctx context.Context, step Step, pending int) (results.Run, error) {
	if sw.o.Progress != nil {
		sw.o.Progress(Event{Step: step, Elapsed: sw.since(sw.start), Remaining: sw.remaining(pending)})
	}
	began := sw.now()
	run, err := sw.o.Step(ctx, step)
	sw.runWall += sw.since(began)
	sw.finished++
	if sw.o.Progress != nil {
		e := Event{Step: step, Done: true, Elapsed: sw.since(sw.start), Remaining: sw.remaining(max(pending-1, 0))}
		if err == nil {
			e.Run = &run
		}
		sw.o.Progress(e)
	}
	return run, err
}

func (sw *sweeper) since(t time.Time) time.Duration { return sw.now().Sub(t) }

// finish sets each driver's knee and bracket and adds the records to the outcome.
func (sw *sweeper) finish() {
	for _, s := range sw.states {
		s.rec.KneeStep, s.rec.KneeLoad = knee(s.rec.Steps)
		if len(s.rec.Steps) > 0 {
			b := bracket(s.rec.Steps)
			b.Refined = s.refined
			b.Crossings = stepNumbers(crossings(s.rec.Steps, b))
			if sw.o.ProjectCapacity != nil && b.OKStep > 0 {
				b.ProjectedServerCapacityPerS = sw.o.ProjectCapacity(s.runs[b.OKStep])
			}
			s.rec.Knee = &b
		}
		sw.out.Sweep.Drivers = append(sw.out.Sweep.Drivers, s.rec)
	}
}

// stopAll stops every driver still stepping, for reason.
func stopAll(states []*driverState, reason string) {
	for _, s := range states {
		if !s.stopped {
			s.stopped, s.rec.StoppedEarly, s.rec.StopReason = true, true, reason
		}
	}
}

// knee is the step with the highest load whose verdict is VerdictOK (its number and load), or
// 0, 0.
//
// The highest, not the last before the first failure: on a shared machine one noisy step may
// go over and the next come back under; WriteSummary notes such a dip below the knee.
func knee(steps []results.SweepStep) (int, float64) {
	n, l := 0, 0.0
	for _, st := range steps {
		if st.Verdict == results.VerdictOK && st.Load > l {
			n, l = st.Step, st.Load
		}
	}
	return n, l
}

// skipText is a skip error's reason without the sentinel's text in front.
func skipText(err error) string {
	s := err.Error()
	if i := strings.Index(s, drivers.ErrUnsupported.Error()+": "); i >= 0 {
		return s[i+len(drivers.ErrUnsupported.Error())+2:]
	}
	return s
}
