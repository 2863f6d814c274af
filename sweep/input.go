package sweep

import (
	"strings"

	"github.com/lockbench/lockbench/pacing"
	"github.com/lockbench/lockbench/results"
)

// DefaultConcurrencySteps is the closed-loop sweep when no steps are given: doubling, so that
// each step asks whether twice the workers get more done.
var DefaultConcurrencySteps = []int{1, 2, 4, 8, 16, 32, 64, 128}

// Input is a sweep's steps as lockbench sweep's flags give them, before they are checked: the
// workers of closed-loop steps, or the rates of open-loop steps one by one or as a geometric
// series, and the open loop's arrivals. The error messages name those flags.
type Input struct {
	ConcurrencySteps []int     // --concurrency-steps
	Rates            []float64 // --rates
	RateFrom, RateTo float64   // --rate-from, --rate-to
	Steps            int       // --steps
	Arrival          string    // --arrival
	// Given reports whether the flag of that name was set (a zero there is a value, not unset):
	// the flags above, and "concurrency" (the workers of one run, which a closed-loop sweep
	// refuses).
	Given func(flag string) bool
}

// Loads returns the sweep's mode (results.SweepConcurrency or results.SweepRate) and loads,
// DefaultConcurrencySteps when no steps are given. Every load of a rate sweep is checked as a
// schedule with Arrival (pacing.Check). The error wraps ErrBadInput.
func (in Input) Loads() (mode string, loads []float64, err error) {
	given := in.Given
	rateSeries := given("rate-from") || given("rate-to") || given("steps")
	switch {
	case given("concurrency-steps") && (given("rates") || rateSeries):
		return "", nil, badInput("--concurrency-steps (closed loop) and rate steps (open loop) exclude each other: sweep one or the other")
	case given("rates") && rateSeries:
		return "", nil, badInput("give the rates either one by one (--rates) or as a series (--rate-from, --rate-to, --steps), not both")
	case rateSeries && !(given("rate-from") && given("rate-to")):
		return "", nil, badInput("a rate series needs both --rate-from and --rate-to")
	}
	switch {
	case given("rates"):
		mode, loads = results.SweepRate, in.Rates
		err = CheckLoads(mode, loads)
	case rateSeries:
		mode = results.SweepRate
		loads, err = GeometricLoads(in.RateFrom, in.RateTo, in.Steps)
	default:
		steps := in.ConcurrencySteps
		if !given("concurrency-steps") {
			steps = DefaultConcurrencySteps
		}
		if given("concurrency") {
			return "", nil, badInput("--concurrency is the workers of one run; a concurrency sweep takes them from --concurrency-steps")
		}
		mode = results.SweepConcurrency
		for _, n := range steps {
			loads = append(loads, float64(n))
		}
		err = CheckLoads(mode, loads)
	}
	if err != nil {
		return "", nil, err
	}
	if mode == results.SweepConcurrency {
		if given("arrival") {
			return "", nil, badInput("--arrival paces an open loop: give rate steps (--rates, or --rate-from/--rate-to)")
		}
		return mode, loads, nil
	}
	for _, rate := range loads {
		if err := pacing.Check(rate, in.Arrival); err != nil {
			return "", nil, badInput("rate steps: %v", strings.TrimPrefix(err.Error(), pacing.ErrBadSchedule.Error()+": "))
		}
	}
	return mode, loads, nil
}
