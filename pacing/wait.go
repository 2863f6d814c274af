package pacing

import (
	"context"
	"sync/atomic"
	"time"
)

// Go's timers wake an idle process through epoll_pwait, whose timeout counts whole
// milliseconds (golang/go#44343): a worker waiting 300µs for its slot wakes up to a millisecond
// late, and an open loop counts that delay as the lock's latency. A Waiter waits in two stages
// so that an attempt starts within microseconds of its intended time:
//
//  1. a Linux timerfd, which fires at nanosecond resolution and parks only the goroutine
//     (the --net delays use one for the same reason), until the spin window before the slot;
//     a ctx that ends interrupts it (through the descriptor's read deadline);
//  2. a busy poll of the clock for the rest: the last few microseconds that waking a
//     goroutine from the timerfd takes.
//
// Stage 2 burns CPU that on a small machine Redis needs, so a SpinBudget bounds it. Where there
// is no timerfd, a Go timer waits until CoarseMargin before the slot and a plain sleep the rest.
//
// One wake-up per slot, and no system call through the scheduler (see fineTimer): at light load
// each of those cost the process more CPU than the wait itself (issue 44, docs/findings.md).
// An earlier Waiter first slept on a Go timer until 2ms before the slot, a second wake-up per
// slot, kept only for its interrupt.

// CoarseMargin is how long before a slot a Waiter without a timerfd stops waiting on a Go
// timer and sleeps the rest: more than the millisecond a Go timer may wake late.
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
	fine   *fineTimer // nil where there is no timerfd: a Go timer then waits
	counts WaitCounts
	// done is the Done channel of the context whose end interrupts fine; stop calls that off,
	// and fired is closed once an interrupt has been set.
	done  <-chan struct{}
	stop  func() bool
	fired chan struct{}
}

// WaitCounts count what a Waiter's waits took: how many there were and how many wake-ups each
// stage cost. Counts do not move with the machine's load as times do, so they say where a
// pacer's CPU goes on a machine too busy to time it. It is a plain value.
type WaitCounts struct {
	// Waits counts the calls of Wait whose time was still ahead.
	Waits int64
	// TimerWakes counts the Go timer's wake-ups (only where there is no timerfd), FineWakes
	// the precise timer's, Spins the waits that polled the clock.
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

// Wait waits until t and returns the time it returned at, and true; or, when ctx ends first,
// the time then and false. Without a timerfd the last CoarseMargin before t is not
// interruptible. A t already past returns at once.
func (w *Waiter) Wait(ctx context.Context, t time.Time) (time.Time, bool) {
	now := time.Now()
	if !now.Before(t) {
		return now, true
	}
	if ctx.Err() != nil {
		return now, false
	}
	w.counts.Waits++
	if w.fine == nil {
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
	} else {
		w.watch(ctx)
	}
	spin := w.budget.allow()
	if d := time.Until(t) - spin; d > 0 {
		if !w.fine.sleep(d) {
			return time.Now(), false
		}
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

// watch makes the end of ctx interrupt the precise timer, once per context: the workers of a
// phase wait under one context, so this costs one context.AfterFunc per worker and phase.
func (w *Waiter) watch(ctx context.Context) {
	done := ctx.Done()
	if done == w.done {
		return
	}
	w.unwatch()
	w.done = done
	if done == nil {
		return // a context that never ends
	}
	fired := make(chan struct{})
	w.fired = fired
	w.stop = context.AfterFunc(ctx, func() {
		w.fine.interrupt()
		close(fired)
	})
}

// unwatch calls off the interrupt of the context watched, or waits until it has been set and
// undoes it, so that it cannot reach a later wait under another context.
func (w *Waiter) unwatch() {
	if w.stop != nil && !w.stop() {
		<-w.fired
		w.fine.resume()
	}
	w.stop, w.fired, w.done = nil, nil, nil
}

// Close releases the Waiter's timers. It is not safe for concurrent use with Wait.
func (w *Waiter) Close() {
	w.timer.Stop()
	w.unwatch()
	w.fine.close()
}
