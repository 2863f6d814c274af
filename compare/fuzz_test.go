package compare

import (
	"errors"
	"math"
	"testing"
)

// FuzzParseMaxRegression: --max-regression comes from the command line. It never panics, fails
// only with ErrBadInput, and accepts only finite fractions ≥ 0 of known metrics.
func FuzzParseMaxRegression(f *testing.F) {
	for _, s := range []string{"throughput=5%", "p99=10%,p999=20%", "throughput=5", "=%", "errors=0%,,", "p50=1e309%", "cmds=-0%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMaxRegression(s)
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("ParseMaxRegression(%q): error %v does not wrap ErrBadInput", s, err)
			}
			return
		}
		for name, v := range m {
			if checkThresholdMetric(name) != nil || !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("ParseMaxRegression(%q) accepted %s=%v", s, name, v)
			}
		}
	})
}
