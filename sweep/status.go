package sweep

import (
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/results"
)

// Status turns a sweep's progress events into the lines lockbench sweep logs, and keeps the
// run under way for a progress line that updates itself (Prefix). Update is called from
// Options.Progress; Prefix may be called from another goroutine at the same time.
type Status struct {
	mode  string
	steps int     // the grid's steps, which refined steps are numbered after
	slo   string  // the SLO percentile's name
	pct   float64 // and its value
	now   func() time.Time

	mu        sync.Mutex
	text      string    // "step 3/8 lockcore 16 workers round 1 (run 5/16)"
	began     time.Time // the run's start
	start     time.Time // the sweep's start
	remaining time.Duration
}

// NewStatus returns the Status of a sweep of o (its Mode, Loads and SLO), which starts now.
func NewStatus(o Options) *Status {
	return newStatus(o, time.Now)
}

func newStatus(o Options, now func() time.Time) *Status {
	return &Status{mode: o.Mode, steps: len(o.Loads), slo: o.SLO.Name, pct: o.SLO.Percentile, now: now, start: now()}
}

// Prefix starts the progress line of the run under way: the run, the sweep's elapsed time and
// the most time left, counted down since the run began, e.g.
// "step 3/8 lockcore 16 workers round 1 (run 5/16)  1m2s elapsed, ≤4m0s left |".
func (s *Status) Prefix() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	left := max(s.remaining-now.Sub(s.began), 0)
	return fmt.Sprintf("%s  %s elapsed, ≤%s left |", s.text, roundSecond(now.Sub(s.start)), roundSecond(left))
}

// Update takes e and returns the lines to log, in order: a run's start, a round's figures
// (when it ran), or a step's verdict and, when the driver stops, why.
func (s *Status) Update(e Event) []string {
	step := s.stepName(e.Step)
	switch {
	case !e.Done:
		s.mu.Lock()
		defer s.mu.Unlock()
		s.text = fmt.Sprintf("%s round %d (run %d/%d)", step, e.Step.Round, e.Step.Seq, e.Step.Total)
		s.began, s.remaining = s.now(), e.Remaining
		return []string{fmt.Sprintf("sweep %s: %s elapsed, at most %s left", s.text, roundSecond(e.Elapsed), roundSecond(e.Remaining))}
	case !e.Decided:
		// A round's end: its own figures; the step's verdict comes when its rounds are in.
		r := e.Run
		if r == nil {
			return nil // it could not run: the step function has said why
		}
		rate := r.ThroughputPerS
		if r.AchievedRate > 0 {
			rate = r.AchievedRate
		}
		lat, _ := LatencyUS(r, s.pct)
		return []string{fmt.Sprintf("sweep %s round %d: %.0f acq/s, %s %v", step, e.Step.Round, rate, s.slo, roundMicros(lat))}
	}
	r := e.Result
	line := fmt.Sprintf("sweep %s: %.0f acq/s, %s %v", step, r.ThroughputPerS, s.slo, roundMicros(r.LatencyUS))
	if iv := r.Interval; iv != nil {
		line += fmt.Sprintf(" (%v to %v over %d rounds)", roundMicros(iv.LowUS), roundMicros(iv.HighUS), len(r.Runs))
	}
	line += ": " + r.Verdict
	if r.Reason != "" && r.Verdict != results.VerdictOK && r.Verdict != results.VerdictOver {
		line += " (" + r.Reason + ")"
	}
	lines := []string{line}
	if e.StopReason != "" {
		lines = append(lines, fmt.Sprintf("sweep: %s takes no further step: %s", e.Step.Driver, e.StopReason))
	}
	return lines
}

// stepName is how progress lines name st: "step 3/8 lockcore 16 workers", "refined step r2
// naive 4500/s", "noise floor naive 250/s".
func (s *Status) stepName(st Step) string {
	load := fmt.Sprintf("%v/s", st.Load)
	if s.mode == results.SweepConcurrency {
		load = fmt.Sprintf("%v workers", st.Load)
		if st.Load == 1 {
			load = "1 worker"
		}
	}
	switch {
	case st.Floor:
		return fmt.Sprintf("noise floor %s %s", st.Driver, load)
	case st.Refined:
		return fmt.Sprintf("refined step r%d %s %s", st.Index-s.steps, st.Driver, load)
	}
	return fmt.Sprintf("step %d/%d %s %s", st.Index, s.steps, st.Driver, load)
}

// roundMicros is a latency in microseconds as progress lines show it: to 10µs.
func roundMicros(us float64) time.Duration {
	return (time.Duration(us) * time.Microsecond).Round(10 * time.Microsecond)
}
