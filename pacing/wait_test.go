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

// With a timerfd, a wait takes one wake-up, whatever its length: the precise timer's alone,
// no Go timer first (that was a second wake-up per slot at light load).
func TestWaiterOneWakeup(t *testing.T) {
	w := NewWaiter(nil)
	defer w.Close()
	if w.fine == nil {
		t.Skip("no timerfd here: a Go timer waits first")
	}
	for _, d := range []time.Duration{300 * time.Microsecond, 5 * time.Millisecond} {
		before := w.Counts()
		target := time.Now().Add(d)
		if got, ok := w.Wait(context.Background(), target); !ok || got.Before(target) {
			t.Fatalf("wait %v: ok %v, returned %v early", d, ok, target.Sub(got))
		}
		c := w.Counts()
		if c.Waits-before.Waits != 1 || c.FineWakes-before.FineWakes != 1 || c.TimerWakes != 0 {
			t.Errorf("wait %v: counts went from %+v to %+v; want one wait woken once, by the precise timer", d, before, c)
		}
	}
}

// A context that ends interrupts a wait on the precise timer at once, however far the time is;
// a later wait under another context is not interrupted by the first one's end.
func TestWaiterInterruptsThePreciseTimer(t *testing.T) {
	w := NewWaiter(nil)
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	began := time.Now()
	if _, ok := w.Wait(ctx, began.Add(10*time.Second)); ok {
		t.Fatal("a wait of 10s whose context ended after 20ms returned ok")
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("the interrupt took %v", took)
	}
	if _, ok := w.Wait(ctx, time.Now().Add(time.Second)); ok {
		t.Error("a wait under an ended context returned ok")
	}
	next, stop := context.WithCancel(context.Background())
	defer stop()
	for _, d := range []time.Duration{time.Millisecond, 3 * time.Millisecond} {
		target := time.Now().Add(d)
		got, ok := w.Wait(next, target)
		if !ok || got.Before(target) {
			t.Errorf("wait %v under a live context after an interrupt: ok %v, %v early", d, ok, target.Sub(got))
		}
	}
}
