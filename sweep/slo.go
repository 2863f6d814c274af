package sweep

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrBadInput is wrapped by every error about user input: an SLO, loads or options that cannot
// be used. Check it with errors.Is.
var ErrBadInput = errors.New("bad sweep input")

func badInput(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadInput, fmt.Sprintf(format, a...))
}

// SLO is a latency objective: the acquire latency's Percentile must stay within Limit. It is a
// plain value and safe for concurrent use.
type SLO struct {
	// Name is the percentile as written, e.g. "p99" or "p99.9".
	Name string
	// Percentile is in (0, 100): 99 for p99, 99.9 for p999.
	Percentile float64
	// Limit is positive.
	Limit time.Duration
}

// String is the SLO as ParseSLO reads it, e.g. "p99=5ms".
func (s SLO) String() string { return s.Name + "=" + s.Limit.String() }

// ParseSLO reads "PERCENTILE=DURATION", e.g. "p99=5ms", "p50=800us", "p999=20ms",
// "p99.99=50ms". The percentile is "p" and either two digits (p50, p90, p99: that percentile;
// p05 is the 5th), or more digits starting with 99 (p999 is 99.9, p9999 is 99.99, as in
// HdrHistogram and wrk output), or a decimal (p99.9, p75.5). It must be above 0 and below 100.
// The duration needs a unit (ns, us or µs, ms, s) and must be positive. Anything else, spaces
// inside included, is an error wrapping ErrBadInput. It is safe for concurrent use.
func ParseSLO(s string) (SLO, error) {
	s = strings.TrimSpace(s)
	name, limit, ok := strings.Cut(s, "=")
	if !ok {
		return SLO{}, badInput("SLO %q: want PERCENTILE=DURATION, e.g. p99=5ms", s)
	}
	pct, err := parsePercentile(name)
	if err != nil {
		return SLO{}, badInput("SLO %q: %v", s, err)
	}
	if limit == "" {
		return SLO{}, badInput("SLO %q: no duration after '=' (e.g. %s=5ms)", s, name)
	}
	d, err := time.ParseDuration(limit)
	if err != nil {
		return SLO{}, badInput("SLO %q: %q is not a duration with a unit (e.g. 5ms, 800us)", s, limit)
	}
	if d <= 0 {
		return SLO{}, badInput("SLO %q: the limit must be positive", s)
	}
	return SLO{Name: name, Percentile: pct, Limit: d}, nil
}

// parsePercentile reads p50, p999, p99.9 (see ParseSLO).
func parsePercentile(name string) (float64, error) {
	digits, ok := strings.CutPrefix(name, "p")
	if !ok || digits == "" {
		return 0, fmt.Errorf("percentile %q: want p followed by digits, e.g. p50, p99, p999, p99.9", name)
	}
	intPart, frac, hasDot := strings.Cut(digits, ".")
	if !allDigits(intPart) || (hasDot && !allDigits(frac)) {
		return 0, fmt.Errorf("percentile %q: want p followed by digits, e.g. p50, p99, p999, p99.9", name)
	}
	var v float64
	switch {
	case hasDot:
		if len(intPart) > 2 {
			return 0, fmt.Errorf("percentile %q: want below 100", name)
		}
		v, _ = strconv.ParseFloat(digits, 64) // digits, one dot: always parses
	case len(intPart) == 1:
		return 0, fmt.Errorf("percentile %q is ambiguous: write p%s0 for the %s0th or p0%s for the %sth", name, intPart, intPart, intPart, intPart)
	case len(intPart) == 2:
		v, _ = strconv.ParseFloat(intPart, 64)
	case strings.HasPrefix(intPart, "99"):
		v, _ = strconv.ParseFloat("99."+intPart[2:], 64)
	default:
		return 0, fmt.Errorf("percentile %q: more than two digits are read as 99.x (p999 is 99.9); write a decimal such as p%s.%s", name, intPart[:2], intPart[2:])
	}
	if !(v > 0 && v < 100) {
		return 0, fmt.Errorf("percentile %q: want above 0 and below 100", name)
	}
	return v, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
