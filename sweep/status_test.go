package sweep

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Each kind of event gives the lines lockbench sweep logged for it before Status moved here,
// and the progress line's prefix counts down from the run's start.
func TestStatusLines(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	workers := newStatus(Options{Mode: results.SweepConcurrency, Loads: []float64{1, 2, 4}, SLO: mustSLO(t, "p99=5ms")}, clock.now)
	rates := newStatus(Options{Mode: results.SweepRate, Loads: []float64{1000, 2000}, SLO: mustSLO(t, "p999=20ms")}, clock.now)
	run := fakeRun(t, "lockcore", 1500, 2*time.Millisecond) // p99 2ms, p99.9 20ms (20.02 in the histogram)
	open := run
	open.AchievedRate = 990

	cases := []struct {
		name string
		s    *Status
		e    Event
		want []string
	}{
		{"a run starts", workers, Event{Step: Step{Driver: "lockcore", Index: 1, Load: 1, Round: 1, Seq: 1, Total: 6},
			Elapsed: 1400 * time.Millisecond, Remaining: 2*time.Minute + 400*time.Millisecond},
			[]string{"sweep step 1/3 lockcore 1 worker round 1 (run 1/6): 1s elapsed, at most 2m0s left"}},
		{"a round ends", workers, Event{Step: Step{Driver: "lockcore", Index: 2, Load: 2, Round: 2}, Done: true, Run: &run},
			[]string{"sweep step 2/3 lockcore 2 workers round 2: 1500 acq/s, p99 2ms"}},
		{"an open-loop round shows the achieved rate", rates, Event{Step: Step{Driver: "naive", Index: 1, Load: 1000, Round: 1}, Done: true, Run: &open},
			[]string{"sweep step 1/2 naive 1000/s round 1: 990 acq/s, p999 20.02ms"}},
		{"a round that could not run", workers, Event{Step: Step{Driver: "naive", Index: 1, Load: 1, Round: 1}, Done: true}, nil},
		{"a refined step is decided", workers, Event{Step: Step{Driver: "lockcore", Index: 5, Load: 3, Refined: true, Round: 3}, Done: true, Decided: true,
			Result: results.SweepStep{ThroughputPerS: 2999.6, LatencyUS: 4321, Verdict: results.VerdictOK, Reason: "within",
				Interval: &results.SweepInterval{LowUS: 4004, HighUS: 4996}, Runs: []int{4, 6, 8}}},
			[]string{"sweep refined step r2 lockcore 3 workers: 3000 acq/s, p99 4.32ms (4ms to 5ms over 3 rounds): ok"}},
		{"the noise floor is decided, the driver stops", rates, Event{Step: Step{Driver: "naive", Load: 50, Floor: true, Round: 1}, Done: true, Decided: true,
			Result: results.SweepStep{ThroughputPerS: 50, LatencyUS: 900, Verdict: results.VerdictFailed, Reason: "2 errors"}, StopReason: "step 1 failed"},
			[]string{"sweep noise floor naive 50/s: 50 acq/s, p999 900µs: failed (2 errors)", "sweep: naive takes no further step: step 1 failed"}},
	}
	for _, tc := range cases {
		if got := tc.s.Update(tc.e); !slices.Equal(got, tc.want) {
			t.Errorf("%s: lines %q, want %q", tc.name, got, tc.want)
		}
	}

	// The prefix is of the last run to start; 5s into it, 5s of its 2m0.4s are gone.
	clock.advance(5 * time.Second)
	if got, want := workers.Prefix(), "step 1/3 lockcore 1 worker round 1 (run 1/6)  5s elapsed, ≤1m55s left |"; got != want {
		t.Errorf("prefix %q, want %q", got, want)
	}
	// Past the estimate, none is left rather than less than none.
	clock.advance(10 * time.Minute)
	if got := workers.Prefix(); !strings.HasSuffix(got, "10m5s elapsed, ≤0s left |") {
		t.Errorf("prefix past the estimate %q", got)
	}
}

// On a whole sweep, every run's start gives one line, every round's end one, and every
// decided step its verdict; the progress line can be read meanwhile (run with -race).
func TestStatusOfARun(t *testing.T) {
	t.Parallel()
	m := model{
		tput: func(_ string, l float64) float64 { return 1000 * l },
		lat:  func(_ string, l float64) time.Duration { return time.Duration(l*l) * time.Millisecond },
	}
	var calls []Step
	o := Options{Mode: results.SweepConcurrency, Loads: []float64{1, 2, 4, 8}, Drivers: []string{"a", "b"},
		SLO: mustSLO(t, "p99=3ms"), Rounds: 2, Step: m.step(t, &calls)}
	s := NewStatus(o)
	var lines []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			s.Prefix()
		}
	}()
	o.Progress = func(e Event) { lines = append(lines, s.Update(e)...) }
	out, err := Run(context.Background(), o)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	count := func(part string) int {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, part) {
				n++
			}
		}
		return n
	}
	steps := 0
	for _, d := range out.Sweep.Drivers {
		steps += len(d.Steps)
	}
	if starts, ends := count("left"), count(" acq/s, p99 ")-steps; starts != len(calls) || ends != len(calls) {
		t.Errorf("%d start lines and %d round lines for %d runs:\n%s", starts, ends, len(calls), strings.Join(lines, "\n"))
	}
	if n := count(": ok") + count(": over"); n != steps {
		t.Errorf("%d verdict lines for %d steps:\n%s", n, steps, strings.Join(lines, "\n"))
	}
	if n := count("takes no further step"); n != 2 {
		t.Errorf("%d stop lines; want one per driver:\n%s", n, strings.Join(lines, "\n"))
	}
}
