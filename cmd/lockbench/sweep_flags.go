package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/sweep"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/spf13/pflag"
)

// sweepFlags are lockbench sweep's own flags; the rest are run's.
type sweepFlags struct {
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
	dryRun           bool

	arrival string // run's --arrival, held back from run's checks (see add)

	mode  string
	loads []float64
	goal  sweep.SLO
	gates []thresholds.Threshold // --threshold: on the knees (thresholds.ParseKnee)
}

// heldFlag is a string flag's value kept apart from where run would put it.
type heldFlag struct{ s *string }

func (h heldFlag) String() string     { return *h.s }
func (h heldFlag) Set(v string) error { *h.s = v; return nil }
func (h heldFlag) Type() string       { return "string" }

func (s *sweepFlags) add(fs *pflag.FlagSet) {
	fs.IntSliceVar(&s.concSteps, "concurrency-steps", nil, "closed loop: the workers of each step, ascending, e.g. 1,2,4,8 (default "+joinInts(sweep.DefaultConcurrencySteps)+" when no rate steps are given)")
	fs.Float64SliceVar(&s.rates, "rates", nil, "open loop: the arrival rate of each step in acquisitions/s, ascending, e.g. 1000,2000,5000")
	fs.Float64Var(&s.rateFrom, "rate-from", 0, "open loop: the first rate of a geometric series (each step the previous times the same factor), with --rate-to and --steps")
	fs.Float64Var(&s.rateTo, "rate-to", 0, "open loop: the last rate of the geometric series")
	fs.IntVar(&s.steps, "steps", 8, "open loop: the number of rates from --rate-from to --rate-to, both included")
	fs.StringVar(&s.slo, "slo", "p99=5ms", "latency objective on acquire latency, PERCENTILE=DURATION: p50, p90, p99, p999 (99.9), p9999, p99.5 …")
	fs.Float64Var(&s.margin, "saturation-margin", sweep.DefaultSaturationMargin, "a step is saturated when its throughput is more than this fraction below the target rate (open loop) or the best earlier step's (closed loop)")
	fs.Float64Var(&s.factor, "stop-factor", sweep.DefaultStopFactor, "stop stepping a driver once its SLO percentile is above this many times the SLO")
	fs.IntVar(&s.rounds, "rounds", sweep.DefaultRounds, "runs of every step, drivers interleaved; the verdict is on the rounds pooled and the interval of the SLO percentile across them (1: one run decides, no interval)")
	fs.IntVar(&s.maxRnds, "max-rounds", sweep.DefaultMaxRounds, "the most rounds of a step whose interval straddles the SLO (uncertain), one more at a time")
	fs.Float64Var(&s.precision, "precision", sweep.DefaultPrecision, "refine each driver's knee by bisection until the bracket's upper load is within this fraction of its lower one (0: no refinement)")
	fs.DurationVar(&s.budget, "budget", sweep.DefaultBudget, "the most time the refinement may take (0: no bound but the precision)")
	fs.Float64Var(&s.floor, "noise-floor", sweep.DefaultFloorShare, "rate sweeps: before the first step, measure each driver's SLO percentile at this fraction of the first rate, and warn when it is within 2 × of the SLO (0: skip)")
	fs.BoolVar(&s.dryRun, "dry-run", false, "print the plan (steps, rounds, refinement, the most time it may take) and exit without measuring")
	// run's repetitions and baseline ratios do not apply to a sweep; its thresholds are on knees.
	for _, name := range []string{"repeat", "baseline", "rate"} {
		if fs.Lookup(name) != nil {
			fs.MarkHidden(name)
		}
	}
	if fl := fs.Lookup("threshold"); fl != nil {
		fl.Usage = "capacity gate, repeatable: on a driver's knee (the highest load within the SLO) or the server-bound capacity projected there, absolute ('lockcore knee>=20000', 'capacity>=50000') or a ratio of two drivers ('lockcore/naive knee>=2'); a driver without a knee fails it; a failed one exits " + strconv.Itoa(exitThresholds)
	}
	// run refuses --arrival without --rate, but a sweep's rates come from its steps: it takes
	// --arrival itself, and check hands it on for rate steps.
	if fl := fs.Lookup("arrival"); fl != nil {
		fl.Value = heldFlag{&s.arrival}
		fl.Usage = "open-loop arrivals for every rate step: uniform (evenly spaced, the default) or poisson (exponential gaps, seeded by --seed)"
	}
}

// changed reports whether the flag called name exists and was set.
func changed(fs *pflag.FlagSet, name string) bool {
	return fs.Lookup(name) != nil && fs.Changed(name)
}

// check validates the sweep's flags, after run's checks have passed on f.
func (s *sweepFlags) check(fs *pflag.FlagSet, f *runFlags) error {
	for _, expr := range f.kneeExprs {
		th, err := thresholds.ParseKnee(expr)
		if err != nil {
			return fmt.Errorf("--threshold: %s", strings.TrimPrefix(err.Error(), thresholds.ErrBadThreshold.Error()+" "))
		}
		for _, d := range th.Drivers() {
			if !slices.Contains(f.drivers, d) {
				return fmt.Errorf("--threshold %q: %s is not among the swept drivers (%s)", expr, d, strings.Join(f.drivers, ","))
			}
		}
		s.gates = append(s.gates, th)
	}
	if fs.Changed("repeat") {
		return errors.New("--repeat is for lockbench run; a sweep repeats each step with --rounds (and --max-rounds for an uncertain one)")
	}
	if fs.Changed("baseline") {
		return errors.New("--baseline is for lockbench run's ratios; a sweep judges each driver by --slo, and gates on a ratio of knees with --threshold 'A/B knee>=X'")
	}
	if changed(fs, "rate") {
		return errors.New("--rate is one run's rate; a sweep takes its rates from --rates or --rate-from/--rate-to/--steps")
	}
	in := sweep.Input{ConcurrencySteps: s.concSteps, Rates: s.rates, RateFrom: s.rateFrom, RateTo: s.rateTo,
		Steps: s.steps, Arrival: s.arrival, Given: func(name string) bool { return changed(fs, name) }}
	var err error
	if s.mode, s.loads, err = in.Loads(); err != nil {
		return inputText(err)
	}
	f.cfg.Arrival = s.arrival // held back from run's checks (see add); Loads checked it
	if s.goal, err = sweep.ParseSLO(s.slo); err != nil {
		return fmt.Errorf("--slo: %v", inputText(err))
	}
	if !fs.Changed("max-rounds") {
		s.maxRnds = max(s.maxRnds, s.rounds)
		if s.rounds == 1 {
			s.maxRnds = 1 // one run decides: no interval to be uncertain about
		}
	}
	// Every option as the flags give it, none left to Run's defaults.
	opts := s.options(f)
	if err := opts.Validate(); err != nil {
		return inputText(err)
	}
	if s.mode == results.SweepConcurrency && fs.Changed("noise-floor") && s.floor > 0 {
		return errors.New("--noise-floor is for rate sweeps: a closed loop has no schedule whose wake-ups add to the latency")
	}
	return checkOut(f)
}

// checkOut makes sure the results can be written to --out before minutes are spent measuring;
// with --no-results, or for parseOnly (flagsOnly), there is nothing to check.
func checkOut(f *runFlags) error {
	if f.noResults || f.flagsOnly {
		return nil
	}
	if err := results.CheckDir(f.out); err != nil {
		return fmt.Errorf("--out %s: %v", f.out, err)
	}
	return nil
}

// inputText is a sweep input error without the sentinel's text in front.
func inputText(err error) error {
	return errors.New(strings.TrimPrefix(err.Error(), sweep.ErrBadInput.Error()+": "))
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}

func parseSweepFlags(args []string, stdout, stderr io.Writer) (*runFlags, *sweepFlags, int, bool) {
	s := &sweepFlags{}
	f, code, ok := parseCommandFlags(commandFlags{name: cmdSweep, examples: sweepExamples, add: s.add, check: s.check}, args, stdout, stderr)
	return f, s, code, ok
}

// options is the sweep as the flags ask for it; Run's step and progress functions are the
// caller's.
func (s *sweepFlags) options(f *runFlags) sweep.Options {
	return sweep.Options{
		Mode:             s.mode,
		Loads:            s.loads,
		Drivers:          f.drivers,
		SLO:              s.goal,
		SaturationMargin: s.margin,
		StopFactor:       s.factor,
		Rounds:           s.rounds,
		MaxRounds:        s.maxRnds,
		Precision:        s.precision,
		Budget:           s.budget,
		FloorShare:       s.floor,
		Confidence:       sweep.DefaultConfidence,
		StepTime:         sweep.StepTime(f.cfg.Warmup, f.cfg.Duration),
		Duration:         f.cfg.Duration,
		// Beside the knee: what the masters' CPU at the knee step says Redis could take.
		ProjectCapacity: results.MedianProjection,
	}
}
