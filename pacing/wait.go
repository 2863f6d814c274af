package pacing

import (
	"context"
	"sync/atomic"
	"time"
)

// Go's timers wake an idle process through epoll_pwait, whose timeout counts whole
// milliseconds (golang/go#44343): a worker waiting 300µs for its slot wakes up to a millisecond
// late, and an open loop counts that delay as the lock's latency. A Waiter waits in three
// stages so that an attempt starts within microseconds of its intended time:
//
//  1. a Go timer, interruptible, until CoarseMargin before the slot (it may wake a millisecond
//     late, and the margin absorbs that);
//  2. a Linux timerfd, which fires at nanosecond resolution and parks only the goroutine
//     (the --net delays use one for the same reason), until the spin window before the slot;
//  3. a busy poll of the clock for the rest: the last few microseconds that waking a
//     goroutine from the timerfd takes.
//
// Stage 3 burns CPU that on a small machine Redis needs, so a SpinBudget bounds it.

// CoarseMargin is how long before a slot a Waiter stops waiting on a Go timer and hands over
// to the precise timer: more than the millisecond a Go timer may wake late.
const CoarseMargin = 2 * time.Millisecond

// DefaultSpinWindow is how long before a slot a Waiter starts polling the clock: enough to
// cover waking a goroutine from the timerfd on an idle machine (measured at 10–40µs on the
// 2-core VM), little enough that a spin costs about 5% of a core at 1000 slots/s.
const DefaultSpinWindow = 50 * time.Microsecond

// DefaultSpinShare is the share of one CPU that the spins of one SpinBudget may take, over
// the time since it was made: 5%.
const DefaultSpinShare = 0.05

// SpinBudget bounds the CPU that the Waiters sharing it spend polling the clock: a Waiter
// spins only while the spins so far took less than Share of one CPU since the budget was made,
// and otherwise wakes on the precise timer alone. At high rates, where the budget runs out,
// the workers are busy and the process's timers are serviced by its running threads anyway,
// so the spin matters least there. It is safe for concurrent use.
type SpinBudget struct {
	start  time.Time
	share  float64
	window time.Duration
	spent  atomic.Int64 // nanoseconds spun
	spins  atomic.Int64
}

// NewSpinBudget returns a budget of share (0 to 1) of one CPU for spins of up to window each.
// share 0 or window 0 turns spinning off.
func NewSpinBudget(share float64, window time.Duration) *SpinBudget {
	return &SpinBudget{start: time.Now(), share: max(share, 0), window: max(window, 0)}
}

// allow returns the spin window the next wait may use: the full window while the budget
// lasts, 0 after.
func (b *SpinBudget) allow() time.Duration {
	if b == nil || b.window == 0 || b.share == 0 {
		return 0
	}
	if float64(b.spent.Load()) > b.share*float64(time.Since(b.start)) {
		return 0
	}
	return b.window
}

func (b *SpinBudget) add(d time.Duration) {
	b.spent.Add(int64(d))
	b.spins.Add(1)
}

// Spent returns the CPU time the budget's Waiters spent spinning, and how many spins there
// were.
func (b *SpinBudget) Spent() (time.Duration, int64) {
	if b == nil {
		return 0, 0
	}
	return time.Duration(b.spent.Load()), b.spins.Load()
}

// Waiter waits for intended start times precisely (see the stages above). Give each goroutine
// its own: a Waiter is not safe for concurrent use. Close releases its timer descriptor.
type Waiter struct {
	budget *SpinBudget
	timer  *time.Timer
	fine   *fineTimer // nil where there is no timerfd: stage 2 then sleeps on a Go timer
	counts WaitCounts
}

// WaitCounts count what a Waiter's waits took: how many there were and how many wake-ups each
// stage cost. Counts do not move with the machine's load as times do, so they say where a
// pacer's CPU goes on a machine too busy to time it. It is a plain value.
type WaitCounts struct {
	// Waits counts the calls of Wait whose time was still ahead.
	Waits int64
	// TimerWakes counts the Go timer's wake-ups (stage 1), FineWakes the precise timer's
	// (stage 2), Spins the waits that polled the clock (stage 3).
	TimerWakes, FineWakes, Spins int64
}

// Add returns the sum of c and o.
func (c WaitCounts) Add(o WaitCounts) WaitCounts {
	return WaitCounts{Waits: c.Waits + o.Waits, TimerWakes: c.TimerWakes + o.TimerWakes, FineWakes: c.FineWakes + o.FineWakes, Spins: c.Spins + o.Spins}
}

// Counts returns what the Waiter's waits took so far. Like Wait, it is not safe for
// concurrent use.
func (w *Waiter) Counts() WaitCounts { return w.counts }

// NewWaiter returns a Waiter that spins within budget (nil: never spins).
func NewWaiter(budget *SpinBudget) *Waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &Waiter{budget: budget, timer: t, fine: newFineTimer()}
}

// Wait waits until t and returns the time it returned at, and true; or, when ctx ends during
// the interruptible first stage, the time then and false. The last CoarseMargin before t is
// not interruptible. A t already past returns at once.
func (w *Waiter) Wait(ctx context.Context, t time.Time) (time.Time, bool) {
	now := time.Now()
	if !now.Before(t) {
		return now, true
	}
	w.counts.Waits++
	if d := t.Sub(now) - CoarseMargin; d > 0 {
		w.timer.Reset(d)
		select {
		case <-w.timer.C:
			w.counts.TimerWakes++
		case <-ctx.Done():
			w.timer.Stop()
			return time.Now(), false
		}
	}
	spin := w.budget.allow()
	if d := time.Until(t) - spin; d > 0 {
		w.fine.sleep(d)
		w.counts.FineWakes++
	}
	if spin == 0 {
		return time.Now(), true
	}
	w.counts.Spins++
	began := time.Now()
	now = began
	for now.Before(t) {
		now = time.Now()
	}
	w.budget.add(now.Sub(began))
	return now, true
}

// Close releases the Waiter's timers. It is not safe for concurrent use with Wait.
func (w *Waiter) Close() {
	w.timer.Stop()
	w.fine.close()
}
