package sweep

import (
	"math"
	"strconv"

	"github.com/lockbench/lockbench/results"
)

// MaxSteps bounds the number of loads, so a typo cannot book the machine for days.
const MaxSteps = 100

// GeometricLoads returns steps rates from from to to (both included), spaced geometrically:
// each step is the previous one times the same factor, (to/from)^(1/(steps-1)). Capacity
// spans orders of magnitude, and a constant factor spends as many steps on 2k–20k/s as on
// 20k–200k/s, where equal differences would crowd the low end with one step. Rates in between
// are rounded to three significant digits (7453.6 → 7450) so tables read easily. from must be
// positive, to above from, steps 2 to MaxSteps, and the rounded rates distinct; otherwise the
// error wraps ErrBadInput. It is safe for concurrent use.
func GeometricLoads(from, to float64, steps int) ([]float64, error) {
	switch {
	case !(from > 0) || math.IsInf(from, 0):
		return nil, badInput("--rate-from %v: want a positive rate", from)
	case !(to > from) || math.IsInf(to, 0):
		return nil, badInput("--rate-to %v: want above --rate-from %v", to, from)
	case steps < 2 || steps > MaxSteps:
		return nil, badInput("--steps %d: want 2 to %d", steps, MaxSteps)
	}
	factor := math.Pow(to/from, 1/float64(steps-1))
	loads := make([]float64, steps)
	for i := range loads {
		switch i {
		case 0:
			loads[i] = from
		case steps - 1:
			loads[i] = to
		default:
			loads[i] = roundSignificant(from*math.Pow(factor, float64(i)), 3)
		}
		if i > 0 && loads[i] <= loads[i-1] {
			return nil, badInput("--rate-from %v --rate-to %v --steps %d: the steps are too close to tell apart; take fewer steps", from, to, steps)
		}
	}
	return loads, nil
}

func roundSignificant(x float64, digits int) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', digits, 64), 64)
	return v
}

// CheckLoads checks loads given one by one for mode (results.SweepRate or
// results.SweepConcurrency): 1 to MaxSteps of them, each positive and finite, strictly
// ascending, and whole numbers of workers, at most MaxWorkers, for concurrency. The error wraps ErrBadInput. It is
// safe for concurrent use.
func CheckLoads(mode string, loads []float64) error {
	flag := "--rates"
	if mode == results.SweepConcurrency {
		flag = "--concurrency-steps"
	} else if mode != results.SweepRate {
		return badInput("mode %q: want %s or %s", mode, results.SweepRate, results.SweepConcurrency)
	}
	if len(loads) == 0 || len(loads) > MaxSteps {
		return badInput("%s: want 1 to %d steps, got %d", flag, MaxSteps, len(loads))
	}
	for i, l := range loads {
		switch {
		case !(l > 0) || math.IsInf(l, 0):
			return badInput("%s: step %d is %v; every step must be positive", flag, i+1, l)
		case mode == results.SweepConcurrency && l != math.Trunc(l):
			return badInput("%s: step %d is %v; workers come in whole numbers", flag, i+1, l)
		case i > 0 && l <= loads[i-1]:
			return badInput("%s: step %d (%v) is not above step %d (%v); list the steps in ascending order, each once", flag, i+1, l, i, loads[i-1])
		case mode == results.SweepConcurrency && l > MaxWorkers:
			return badInput("%s: %v workers: at most %d", flag, l, MaxWorkers)
		}
	}
	return nil
}
