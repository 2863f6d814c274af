package pacing

import (
	"context"
	"testing"
	"time"
)

// A Waiter never returns before the time it waits for, whichever stages the wait takes (a long
// wait passes through the Go timer, a short one only the precise timer, a past one none).
func TestWaiterNeverEarly(t *testing.T) {
	budget := NewSpinBudget(1, DefaultSpinWindow) // spin whenever asked: every stage runs
	w := NewWaiter(budget)
	defer w.Close()
	for _, d := range []time.Duration{-time.Millisecond, 0, 30 * time.Microsecond, 400 * time.Microsecond, 3 * time.Millisecond} {
		target := time.Now().Add(d)
		got, ok := w.Wait(context.Background(), target)
		if !ok || got.Before(target) {
			t.Errorf("wait %v: returned %v before the target (ok %v)", d, target.Sub(got), ok)
		}
	}
	if _, n := budget.Spent(); n == 0 {
		t.Error("a budget of a whole CPU allowed no spin")
	}
}

// An interrupt during the Go-timer stage returns at once with false.
func TestWaiterInterrupted(t *testing.T) {
	w := NewWaiter(nil)
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := w.Wait(ctx, time.Now().Add(time.Hour)); ok {
		t.Fatal("a wait of an hour with its context done returned ok")
	}
}

// The spins stay within the budget's share of one CPU, give or take the one spin that may
// start just before the budget runs out; a share of 0 never spins.
func TestSpinBudgetBound(t *testing.T) {
	for _, share := range []float64{0, 0.05} {
		budget := NewSpinBudget(share, DefaultSpinWindow)
		w := NewWaiter(budget)
		// The last spin may start just under the budget, and a loaded machine may deschedule
		// it mid-spin: the bound allows the longest single spin on top of the share.
		var longest time.Duration
		for range 200 {
			before, _ := budget.Spent()
			w.Wait(context.Background(), time.Now().Add(100*time.Microsecond))
			after, _ := budget.Spent()
			longest = max(longest, after-before)
		}
		w.Close()
		spent, n := budget.Spent()
		if bound := time.Duration(share*float64(time.Since(budget.start))) + longest; spent > bound {
			t.Errorf("share %v: spun %v in %d spins; the bound is %v", share, spent, n, bound)
		}
		if share == 0 && n != 0 {
			t.Errorf("share 0: %d spins", n)
		}
	}
}
