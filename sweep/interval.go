package sweep

import (
	"math"
	"slices"

	"github.com/lockbench/lockbench/results"
)

// IntervalMethod says how a step's confidence interval is made, for the result file.
const IntervalMethod = "order statistics of the rounds' percentiles (distribution-free interval of the median round)"

// DefaultConfidence is the least coverage asked of a step's interval. With the default 3
// rounds the only interval is the rounds' range, which covers the median round's percentile
// with probability 1 - 2 × (1/2)^3 = 75%; more rounds give narrower intervals of the same
// coverage (6 rounds: the 2nd to the 5th, 78%). Asking more of 3 rounds is asking the
// impossible, and 2 rounds cover only 50%.
const DefaultConfidence = 0.75

// Interval returns a distribution-free confidence interval of the median of the distribution
// the values were drawn from: the order statistics x(k) and x(n+1-k) for the largest k whose
// coverage, 1 - 2·P(Binomial(n, 1/2) ≤ k-1), is at least confidence; with no such k (too few
// values) the range, k = 1. It makes no assumption about the shape of the distribution, which
// for a p99 on a shared machine is skewed and heavy-tailed. With fewer than two values it
// returns nil. It is safe for concurrent use.
//
// The rounds of a step are independent runs of the same load, so their percentiles are draws
// from one distribution; bootstrap intervals need far more than a handful of draws to mean
// what they say, where order statistics are exact for any n.
func Interval(values []float64, confidence float64) *results.SweepInterval {
	n := len(values)
	if n < 2 {
		return nil
	}
	x := slices.Clone(values)
	slices.Sort(x)
	k := intervalK(n, confidence)
	return &results.SweepInterval{LowUS: x[k-1], HighUS: x[n-k], Coverage: coverage(n, k)}
}

// intervalK is the k of Interval for n values: the largest whose coverage is at least
// confidence, or 1.
func intervalK(n int, confidence float64) int {
	k := 1
	for j := 2; 2*j <= n; j++ {
		if coverage(n, j) < confidence {
			break
		}
		k = j
	}
	return k
}

// canNarrow reports whether more rounds, up to most, could decide a step that n rounds left
// uncertain. With k fixed, another value only moves x(k) down and the k-th largest up: the
// interval widens, and a straddle stays. Only a larger k can narrow it.
func canNarrow(n, most int, confidence float64) bool {
	return intervalK(most, confidence) > intervalK(n, confidence)
}

// coverage is the probability that [x(k), x(n+1-k)] of n draws holds the median:
// 1 - 2·P(Binomial(n, 1/2) ≤ k-1).
func coverage(n, k int) float64 {
	var tail float64
	c := 1.0 // C(n, i), from i = 0
	for i := range k {
		tail += c
		c = c * float64(n-i) / float64(i+1)
	}
	return 1 - 2*tail/math.Pow(2, float64(n))
}
