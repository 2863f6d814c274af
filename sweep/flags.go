package sweep

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/spf13/pflag"
)

// Flags are lockbench sweep's own flags, registered on a flag set that holds lockbench run's
// (the rest of a sweep's settings: drivers, workload, deployment). Check makes the Options
// they ask for. A Flags is used by one goroutine.
type Flags struct {
	concSteps        []int
	rates            []float64
	rateFrom, rateTo float64
	steps            int
	slo              string
	margin, factor   float64
	rounds, maxRnds  int
	precision        float64
	budget           time.Duration
	floor            float64
	// DryRun: print the plan (WritePlan) and measure nothing.
	DryRun bool
	// Arrival is run's --arrival, held back from run's checks (see Register); after Check, the
	// arrivals of every rate step.
	Arrival string

	mode  string
	loads []float64
	goal  SLO
	// Gates are the --threshold conditions, on the knees (thresholds.ParseKnee), after Check.
	Gates []thresholds.Threshold
}

// RunSettings is what a sweep takes of lockbench run's flags, checked by run's checks.
type RunSettings struct {
	Drivers []string
	// Thresholds are the --threshold texts, which a sweep reads as gates on its knees.
	Thresholds []string
	// Warmup and Duration are each step's run's (workloads.Config).
	Warmup, Duration time.Duration
}

// heldFlag is a string flag's value kept apart from where run would put it.
type heldFlag struct{ s *string }

func (h heldFlag) String() string     { return *h.s }
func (h heldFlag) Set(v string) error { *h.s = v; return nil }
func (h heldFlag) Type() string       { return "string" }

// Register adds the sweep's flags to fs, which holds run's, and hides those of run that do not
// apply to a sweep.
func (s *Flags) Register(fs *pflag.FlagSet) {
	fs.IntSliceVar(&s.concSteps, "concurrency-steps", nil, "closed loop: the workers of each step, ascending, e.g. 1,2,4,8 (default "+joinInts(DefaultConcurrencySteps)+" when no rate steps are given)")
	fs.Float64SliceVar(&s.rates, "rates", nil, "open loop: the arrival rate of each step in acquisitions/s, ascending, e.g. 1000,2000,5000")
	fs.Float64Var(&s.rateFrom, "rate-from", 0, "open loop: the first rate of a geometric series (each step the previous times the same factor), with --rate-to and --steps")
	fs.Float64Var(&s.rateTo, "rate-to", 0, "open loop: the last rate of the geometric series")
	fs.IntVar(&s.steps, "steps", 8, "open loop: the number of rates from --rate-from to --rate-to, both included")
	fs.StringVar(&s.slo, "slo", "p99=5ms", "latency objective on acquire latency, PERCENTILE=DURATION: p50, p90, p99, p999 (99.9), p9999, p99.5 …")
	fs.Float64Var(&s.margin, "saturation-margin", DefaultSaturationMargin, "a step is saturated when its throughput is more than this fraction below the target rate (open loop) or the best earlier step's (closed loop)")
	fs.Float64Var(&s.factor, "stop-factor", DefaultStopFactor, "stop stepping a driver once its SLO percentile is above this many times the SLO")
	fs.IntVar(&s.rounds, "rounds", DefaultRounds, "runs of every step, drivers interleaved; the verdict is on the rounds pooled and the interval of the SLO percentile across them (1: one run decides, no interval)")
	fs.IntVar(&s.maxRnds, "max-rounds", DefaultMaxRounds, "the most rounds of a step whose interval straddles the SLO (uncertain), one more at a time")
	fs.Float64Var(&s.precision, "precision", DefaultPrecision, "refine each driver's knee by bisection until the bracket's upper load is within this fraction of its lower one (0: no refinement)")
	fs.DurationVar(&s.budget, "budget", DefaultBudget, "the most time the refinement may take (0: no bound but the precision)")
	fs.Float64Var(&s.floor, "noise-floor", DefaultFloorShare, "rate sweeps: before the first step, measure each driver's SLO percentile at this fraction of the first rate, and warn when it is within 2 × of the SLO (0: skip)")
	fs.BoolVar(&s.DryRun, "dry-run", false, "print the plan (steps, rounds, refinement, the most time it may take) and exit without measuring")
	// run's repetitions and baseline ratios do not apply to a sweep; its thresholds are on knees.
	for _, name := range []string{"repeat", "baseline", "rate"} {
		if fs.Lookup(name) != nil {
			fs.MarkHidden(name)
		}
	}
	// run refuses --arrival without --rate, but a sweep's rates come from its steps: it takes
	// --arrival itself, and Check hands it on for rate steps.
	if fl := fs.Lookup("arrival"); fl != nil {
		fl.Value = heldFlag{&s.Arrival}
		fl.Usage = "open-loop arrivals for every rate step: uniform (evenly spaced, the default) or poisson (exponential gaps, seeded by --seed)"
	}
}

// changed reports whether the flag called name exists and was set.
func changed(fs *pflag.FlagSet, name string) bool {
	return fs.Lookup(name) != nil && fs.Changed(name)
}

// Check validates the sweep's flags of fs, after run's checks have passed on run. The error
// wraps ErrBadInput; its text is the complaint alone, naming the flag.
func (s *Flags) Check(fs *pflag.FlagSet, run RunSettings) error {
	for _, expr := range run.Thresholds {
		th, err := thresholds.ParseKnee(expr)
		if err != nil {
			return flagError("--threshold: " + strings.TrimPrefix(err.Error(), thresholds.ErrBadThreshold.Error()+" "))
		}
		for _, d := range th.Drivers() {
			if !slices.Contains(run.Drivers, d) {
				return flagError(fmt.Sprintf("--threshold %q: %s is not among the swept drivers (%s)", expr, d, strings.Join(run.Drivers, ",")))
			}
		}
		s.Gates = append(s.Gates, th)
	}
	if fs.Changed("repeat") {
		return flagError("--repeat is for lockbench run; a sweep repeats each step with --rounds (and --max-rounds for an uncertain one)")
	}
	if fs.Changed("baseline") {
		return flagError("--baseline is for lockbench run's ratios; a sweep judges each driver by --slo, and gates on a ratio of knees with --threshold 'A/B knee>=X'")
	}
	if changed(fs, "rate") {
		return flagError("--rate is one run's rate; a sweep takes its rates from --rates or --rate-from/--rate-to/--steps")
	}
	in := Input{ConcurrencySteps: s.concSteps, Rates: s.rates, RateFrom: s.rateFrom, RateTo: s.rateTo,
		Steps: s.steps, Arrival: s.Arrival, Given: func(name string) bool { return changed(fs, name) }}
	var err error
	if s.mode, s.loads, err = in.Loads(); err != nil {
		return inputText(err)
	}
	if s.goal, err = ParseSLO(s.slo); err != nil {
		return flagError("--slo: " + inputText(err).Error())
	}
	if !fs.Changed("max-rounds") {
		s.maxRnds = max(s.maxRnds, s.rounds)
		if s.rounds == 1 {
			s.maxRnds = 1 // one run decides: no interval to be uncertain about
		}
	}
	// Every option as the flags give it, none left to Run's defaults.
	opts := s.Options(run)
	if err := opts.Validate(); err != nil {
		return inputText(err)
	}
	if s.mode == results.SweepConcurrency && fs.Changed("noise-floor") && s.floor > 0 {
		return flagError("--noise-floor is for rate sweeps: a closed loop has no schedule whose wake-ups add to the latency")
	}
	return nil
}

// Options is the sweep as the flags ask for it, after Check; Run's step and progress functions
// are the caller's.
func (s *Flags) Options(run RunSettings) Options {
	return Options{
		Mode:             s.mode,
		Loads:            s.loads,
		Drivers:          run.Drivers,
		SLO:              s.goal,
		SaturationMargin: s.margin,
		StopFactor:       s.factor,
		Rounds:           s.rounds,
		MaxRounds:        s.maxRnds,
		Precision:        s.precision,
		Budget:           s.budget,
		FloorShare:       s.floor,
		Confidence:       DefaultConfidence,
		StepTime:         StepTime(run.Warmup, run.Duration),
		Duration:         run.Duration,
		// Beside the knee: what the masters' CPU at the knee step says Redis could take.
		ProjectCapacity: results.MedianProjection,
	}
}

// inputText is an input error without ErrBadInput's text in front, still wrapping it.
func inputText(err error) error {
	return flagError(strings.TrimPrefix(err.Error(), ErrBadInput.Error()+": "))
}

// flagError is a complaint about a flag: its text alone, wrapping ErrBadInput.
type flagError string

func (e flagError) Error() string        { return string(e) }
func (e flagError) Is(target error) bool { return target == ErrBadInput }

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}
