package sweep

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

func TestGeometricLoads(t *testing.T) {
	got, err := GeometricLoads(2000, 200000, 8)
	if err != nil {
		t.Fatal(err)
	}
	// 100^(1/7) = 1.93 per step, rounded to three significant digits.
	want := []float64{2000, 3860, 7460, 14400, 27800, 53700, 104000, 200000}
	if !slices.Equal(got, want) {
		t.Errorf("GeometricLoads(2000, 200000, 8) = %v; want %v", got, want)
	}
	// The ratio between neighbours stays near the factor: geometric, not linear.
	for i := 1; i < len(got); i++ {
		if r := got[i] / got[i-1]; math.Abs(r-1.93) > 0.02 {
			t.Errorf("step %d/%d ratio %.3f; want about 1.93", i+1, i, r)
		}
	}
	if two, err := GeometricLoads(10, 20, 2); err != nil || !slices.Equal(two, []float64{10, 20}) {
		t.Errorf("GeometricLoads(10, 20, 2) = %v, %v", two, err)
	}
	for _, c := range []struct {
		from, to float64
		steps    int
		msg      string
	}{
		{0, 100, 3, "--rate-from 0"},
		{-5, 100, 3, "--rate-from -5"},
		{math.NaN(), 100, 3, "--rate-from NaN"},
		{100, 100, 3, "--rate-to 100: want above"},
		{100, 50, 3, "--rate-to 50"},
		{100, math.Inf(1), 3, "--rate-to +Inf"},
		{100, 1000, 1, "--steps 1"},
		{100, 1000, MaxSteps + 1, "--steps 101"},
		{1000, 1001, 50, "too close"},
	} {
		_, err := GeometricLoads(c.from, c.to, c.steps)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("GeometricLoads(%v, %v, %d): %v; want ErrBadInput with %q", c.from, c.to, c.steps, err, c.msg)
		}
	}
}

func TestCheckLoads(t *testing.T) {
	for _, ok := range []struct {
		mode  string
		loads []float64
	}{
		{results.SweepConcurrency, []float64{1, 2, 4, 8}},
		{results.SweepConcurrency, []float64{3}},
		{results.SweepRate, []float64{1000, 1500.5, 2000}},
	} {
		if err := CheckLoads(ok.mode, ok.loads); err != nil {
			t.Errorf("CheckLoads(%s, %v): %v", ok.mode, ok.loads, err)
		}
	}
	for _, c := range []struct {
		mode  string
		loads []float64
		msg   string
	}{
		{results.SweepConcurrency, nil, "--concurrency-steps: want 1 to 100 steps, got 0"},
		{results.SweepConcurrency, []float64{1, 4, 2}, "step 3 (2) is not above step 2 (4)"},
		{results.SweepConcurrency, []float64{1, 1}, "not above"},
		{results.SweepConcurrency, []float64{0, 1}, "step 1 is 0"},
		{results.SweepConcurrency, []float64{1, 2.5}, "whole numbers"},
		{results.SweepRate, []float64{-1000}, "--rates: step 1 is -1000"},
		{results.SweepRate, []float64{math.NaN()}, "positive"},
		{results.SweepRate, make([]float64, MaxSteps+1), "want 1 to 100 steps"},
		{"load", []float64{1}, `mode "load"`},
	} {
		err := CheckLoads(c.mode, c.loads)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("CheckLoads(%s, %v): %v; want ErrBadInput with %q", c.mode, c.loads, err, c.msg)
		}
	}
}
