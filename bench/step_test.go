package bench

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

func TestRoundOrder(t *testing.T) {
	t.Parallel()
	abc := []string{"a", "b", "c"}
	tests := []struct {
		names []string
		round int
		want  []string
	}{
		{abc, 0, []string{"a", "b", "c"}},
		{abc, 1, []string{"c", "a", "b"}},
		{abc, 2, []string{"b", "c", "a"}},
		{abc, 3, []string{"a", "b", "c"}},
		{[]string{"a", "b"}, 1, []string{"b", "a"}},
		{[]string{"solo"}, 5, []string{"solo"}},
	}
	for _, tt := range tests {
		if got := RoundOrder(tt.names, tt.round); !slices.Equal(got, tt.want) {
			t.Errorf("RoundOrder(%v, %d) = %v, want %v", tt.names, tt.round, got, tt.want)
		}
	}
	if !slices.Equal(abc, []string{"a", "b", "c"}) {
		t.Fatal("RoundOrder modified its input")
	}
	// Over n rounds every driver takes every position once.
	for pos := range abc {
		seen := map[string]bool{}
		for r := range abc {
			seen[RoundOrder(abc, r)[pos]] = true
		}
		if len(seen) != len(abc) {
			t.Errorf("position %d over %d rounds held only %v", pos, len(abc), seen)
		}
	}
}

func TestSkipReason(t *testing.T) {
	t.Parallel()
	open := fmt.Errorf("driver redislock: %w", fmt.Errorf("%w: redislock has no multi-master (RedLock) mode", drivers.ErrUnsupported))
	kind := fmt.Errorf("%w: driver naive cannot run workload reentrancy: it needs mutex,reentrant locks, the driver has mutex", drivers.ErrUnsupported)
	tests := []struct {
		err  error
		want string
	}{
		{open, "redislock has no multi-master (RedLock) mode"},
		{kind, "driver naive cannot run workload reentrancy: it needs mutex,reentrant locks, the driver has mutex"},
		{errors.New("something else"), "something else"},
	}
	for _, tt := range tests {
		name := "redislock"
		if tt.err == kind {
			name = "naive"
		}
		if got := SkipReason(name, tt.err); got != tt.want {
			t.Errorf("SkipReason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestSafetySummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		violations, fencing int64
		want                string
	}{
		{3, 0, "3 mutual-exclusion violations (two holders of one lock at once)"},
		{0, 0, "0 mutual-exclusion violations (two holders of one lock at once)"},
		{5, 5, "5 violations, all fencing tokens out of grant order"},
		{5, 2, "5 violations, 2 of them fencing tokens out of grant order (the rest: two holders of one lock at once)"},
	}
	for _, tt := range tests {
		run := results.Run{Violations: tt.violations, FencingViolations: tt.fencing}
		if got := SafetySummary(&run); got != tt.want {
			t.Errorf("%d violations, %d fencing: %q, want %q", tt.violations, tt.fencing, got, tt.want)
		}
	}
}
