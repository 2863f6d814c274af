package thresholds

import (
	"errors"
	"testing"
)

// FuzzParse: thresholds come from the command line. Parse never panics, fails only with
// ErrBadThreshold, and what it accepts parses again to the same threshold.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"p99<5ms", "throughput>20000", "violations==0", "lockcore/naive throughput>=1.5x", "a/b c<=", "<", "p99 < 1e400ms", "x/y/z p50!=3us"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrBadThreshold) {
				t.Fatalf("Parse(%q): error %v does not wrap ErrBadThreshold", s, err)
			}
			return
		}
		again, err := Parse(th.Expr)
		if err != nil || again.Driver != th.Driver || again.Base != th.Base || again.Metric.Name != th.Metric.Name || again.Op != th.Op || again.Limit != th.Limit {
			t.Fatalf("Parse(%q) = %+v, but its Expr parses to %+v, %v", s, th, again, err)
		}
	})
}
