package results

import (
	"fmt"
	"math"
)

// Sweep modes: what a sweep steps up.
const (
	// SweepRate steps the open-loop arrival rate (acquisitions per second).
	SweepRate = "rate"
	// SweepConcurrency steps the number of closed-loop workers.
	SweepConcurrency = "concurrency"
)

// Sweep verdicts of one step.
const (
	// VerdictOK: the load was achieved and the SLO percentile stayed within the limit.
	VerdictOK = "ok"
	// VerdictOver: the load was achieved but the SLO percentile was above the limit.
	VerdictOver = "over"
	// VerdictSaturated: the load was not achieved (see Sweep.SaturationMargin).
	VerdictSaturated = "saturated"
	// VerdictFailed: the step counted errors or safety violations, or could not run.
	VerdictFailed = "failed"
	// VerdictIncomplete: the step was interrupted (Ctrl-C) before its measured phase ended.
	VerdictIncomplete = "incomplete"
)

// Sweep is the record of a lockbench sweep, in File.Sweep: the load steps, the SLO, and per
// driver each step's verdict and the knee. Every step that ran is also a Run of the file
// (SweepStep.Run is its index), so readers that know nothing of sweeps still see every run.
// It is a plain value; it is not safe for concurrent modification.
type Sweep struct {
	// Mode is SweepRate or SweepConcurrency.
	Mode string `json:"mode"`
	// Loads are the planned steps in ascending order: target acquisitions per second
	// (SweepRate) or workers (SweepConcurrency).
	Loads []float64 `json:"loads"`
	SLO   SweepSLO  `json:"slo"`
	// SaturationMargin is the fraction by which a step's throughput may fall short before the
	// step counts as saturated: of the target rate (SweepRate), or of the best throughput of
	// the driver's earlier steps (SweepConcurrency).
	SaturationMargin float64 `json:"saturation_margin"`
	// StopFactor: a driver stops stepping once a step's SLO percentile exceeds StopFactor
	// times the limit.
	StopFactor float64       `json:"stop_factor"`
	Drivers    []SweepDriver `json:"drivers"`
}

// SweepSLO is a sweep's service level objective: the acquire latency percentile Name (p99,
// p999, …; Percentile in (0, 100)) must stay within LimitUS microseconds. It is a plain value.
type SweepSLO struct {
	Name       string  `json:"name"`
	Percentile float64 `json:"percentile"`
	LimitUS    float64 `json:"limit_us"`
}

// SweepDriver is one driver's steps in a sweep, and its knee. It is a plain value.
type SweepDriver struct {
	Driver string      `json:"driver"`
	Steps  []SweepStep `json:"steps"`
	// KneeStep is the 1-based step (an index into Sweep.Loads plus one) of the knee: the
	// highest load whose verdict is VerdictOK; 0 when no step was.
	KneeStep int `json:"knee_step,omitempty"`
	// KneeLoad is Sweep.Loads[KneeStep-1]; 0 when there is no knee.
	KneeLoad float64 `json:"knee_load,omitempty"`
	// StoppedEarly is true when the driver did not run every step; StopReason says why (a
	// saturated step, or two in a row in a concurrency sweep; the SLO broken by StopFactor; a
	// failed step; a skip; an interrupt).
	StoppedEarly bool   `json:"stopped_early,omitempty"`
	StopReason   string `json:"stop_reason,omitempty"`
}

// SweepStep is one step of one driver. It is a plain value.
type SweepStep struct {
	// Step is 1-based: Sweep.Loads[Step-1] is its load.
	Step int     `json:"step"`
	Load float64 `json:"load"`
	// Run is the index of the step's run in File.Runs; -1 when the step produced no run.
	Run int `json:"run"`
	// ThroughputPerS is the achieved acquisitions per second of the measured phase: Run's
	// AchievedRate in an open loop (over the schedule's window), its ThroughputPerS otherwise.
	ThroughputPerS float64 `json:"throughput_per_s"`
	// LatencyUS is the SLO percentile of the acquire latency, in microseconds.
	LatencyUS float64 `json:"latency_us"`
	Verdict   string  `json:"verdict"`
	// Reason explains a verdict other than VerdictOK and VerdictOver.
	Reason string `json:"reason,omitempty"`
	// SavedS is the measured time the step did not spend because it was stopped once past
	// the SLO (lockbench sweep --abort-on-fail), in seconds; 0 for a step that ran its course.
	SavedS float64 `json:"saved_s,omitempty"`
}

// check reports the first inconsistency of s in a file with runs runs: a reader indexing
// File.Runs or Loads with a step's fields must not go out of range.
func (s *Sweep) check(runs int) error {
	if s.Mode != SweepRate && s.Mode != SweepConcurrency {
		return fmt.Errorf("mode %q: want %q or %q", s.Mode, SweepRate, SweepConcurrency)
	}
	if !(s.SLO.Percentile > 0 && s.SLO.Percentile < 100) || !(s.SLO.LimitUS > 0) || math.IsInf(s.SLO.LimitUS, 0) {
		return fmt.Errorf("slo: percentile %v, limit %vµs: want a percentile in (0, 100) and a positive limit", s.SLO.Percentile, s.SLO.LimitUS)
	}
	for i, d := range s.Drivers {
		if d.KneeStep < 0 || d.KneeStep > len(s.Loads) {
			return fmt.Errorf("drivers[%d].knee_step %d: want 0 to %d", i, d.KneeStep, len(s.Loads))
		}
		for j, st := range d.Steps {
			if st.Step < 1 || st.Step > len(s.Loads) {
				return fmt.Errorf("drivers[%d].steps[%d].step %d: want 1 to %d", i, j, st.Step, len(s.Loads))
			}
			if st.Run < -1 || st.Run >= runs {
				return fmt.Errorf("drivers[%d].steps[%d].run %d: the file has %d runs", i, j, st.Run, runs)
			}
		}
	}
	return nil
}
