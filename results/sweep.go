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
	// VerdictUncertain: the load was achieved, but the confidence interval of the SLO
	// percentile across the step's rounds straddles the limit, even after the most rounds.
	VerdictUncertain = "uncertain"
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

	// Rounds is how many runs each step gets before it is decided, MaxRounds how many an
	// uncertain step may get in all; 0 in files from before rounds (one run per step).
	Rounds    int `json:"rounds,omitempty"`
	MaxRounds int `json:"max_rounds,omitempty"`
	// Confidence is the least coverage of the interval of the SLO percentile across a step's
	// rounds (see SweepInterval), and IntervalMethod how it is made.
	Confidence     float64 `json:"confidence,omitempty"`
	IntervalMethod string  `json:"interval_method,omitempty"`
	// Precision is the width, as a fraction of the lower load, down to which the knee's
	// bracket is refined (0.05: within 5%); BudgetS bounds the refinement's time in seconds.
	// Both 0 when the sweep did not refine.
	Precision float64 `json:"precision,omitempty"`
	BudgetS   float64 `json:"budget_s,omitempty"`
	// PlannedMaxS is the most time the sweep could take, as planned before it started.
	PlannedMaxS float64 `json:"planned_max_s,omitempty"`
	// NoiseFloor is the SLO percentile each driver measured at a low load before the first
	// step: what the machine itself adds; nil when none was measured.
	NoiseFloor []SweepFloor `json:"noise_floor,omitempty"`
	// RoundTrip is the raw round trip to the server, measured before the noise floor; nil
	// when none was (files from before it, a closed-loop sweep).
	RoundTrip *SweepRoundTrip `json:"round_trip,omitempty"`
	// PacedRoundTrips are the same requests paced: one per slot of a uniform schedule at a
	// rate (RatePerS), waited for as the open loop's workers wait, so that the client and the
	// server idle between them as in a run at that rate; at the noise floor's rate and the
	// lowest steps', ascending. Empty when none was measured (files from before them).
	PacedRoundTrips []SweepRoundTrip `json:"paced_round_trips,omitempty"`
}

// SweepRoundTrip is the raw round trip to the server: requests (PING) sent one at a time by
// lockbench itself on a connection of its own, back to back (RatePerS 0) or paced at
// RatePerS, with no lock and no workers. Beside the noise floor it says how much of the floor
// is the network's and the server's. Latencies are in microseconds. It is a plain value.
type SweepRoundTrip struct {
	// RatePerS is the paced requests' rate per second; 0 back to back.
	RatePerS float64 `json:"rate_per_s,omitempty"`
	// Count is how many requests were answered, in DurationS seconds.
	Count     int64   `json:"count"`
	DurationS float64 `json:"duration_s"`
	// LatencyUS is at the SLO's percentile.
	LatencyUS float64 `json:"latency_us,omitempty"`
	P50US     float64 `json:"p50_us,omitempty"`
	P99US     float64 `json:"p99_us,omitempty"`
	P999US    float64 `json:"p999_us,omitempty"`
	MaxUS     float64 `json:"max_us,omitempty"`
	// FromSlot, paced round trips only, is the same requests timed from their slots, as a run
	// times its acquisitions from their intended starts: the pacer waking late is in it, where
	// the figures above begin at the send. Nil back to back.
	FromSlot *SweepFromSlot `json:"from_slot,omitempty"`
	// Error says why there is no round trip (the latencies are then 0); empty otherwise.
	Error string `json:"error,omitempty"`
}

// SweepFromSlot is a paced round trip's percentiles from each request's slot, in µs.
type SweepFromSlot struct {
	P50US  float64 `json:"p50_us"`
	P99US  float64 `json:"p99_us"`
	P999US float64 `json:"p999_us"`
	MaxUS  float64 `json:"max_us"`
}

// SweepFloor is one driver's noise floor: the SLO percentile at a load so low that the
// deployment is idle, so that the latency is the machine's and the client's own. It is a plain
// value.
type SweepFloor struct {
	Driver string  `json:"driver"`
	Load   float64 `json:"load"`
	// Run is the index of the floor's run in File.Runs; -1 when it produced none.
	Run       int     `json:"run"`
	LatencyUS float64 `json:"latency_us"`
	// Warning says why the knee will not be stable when the floor is within 2 × of the SLO;
	// empty otherwise.
	Warning string `json:"warning,omitempty"`
}

// SweepInterval is a confidence interval of a step's SLO percentile across its rounds: the
// order statistics LowUS and HighUS of the rounds' percentiles, which cover the median round's
// percentile with probability Coverage (distribution-free). It is a plain value.
type SweepInterval struct {
	LowUS    float64 `json:"low_us"`
	HighUS   float64 `json:"high_us"`
	Coverage float64 `json:"coverage"`
}

// KneeBracket is where a driver's knee lies: at or above OKLoad (a step judged ok) and below
// OverLoad (the lowest step above it that was not ok). Either side may be missing (0): no step
// was ok, or none above the highest ok step was tried or failed. It is a plain value.
type KneeBracket struct {
	OKStep   int     `json:"ok_step,omitempty"`
	OKLoad   float64 `json:"ok_load,omitempty"`
	OverStep int     `json:"over_step,omitempty"`
	OverLoad float64 `json:"over_load,omitempty"`
	// OverVerdict is the verdict at OverLoad: over, saturated, failed, or uncertain (the knee
	// is then about there, but on which side the rounds could not tell).
	OverVerdict string `json:"over_verdict,omitempty"`
	// Width is OverLoad / OKLoad - 1 when both are known.
	Width float64 `json:"width,omitempty"`
	// Refined says why refinement ended: the precision was reached, the budget ran out, the
	// loads could not be told apart, or it was interrupted; empty when it did not run.
	Refined string `json:"refined,omitempty"`
	// Crossings are the steps that contradict the bracket as the one crossing of the SLO: below
	// OKLoad a step that was not ok, or above an OverLoad decided over a step that was ok or
	// uncertain. Then the SLO's percentile does not rise steadily with the load, and a sweep of
	// the same command may put the knee at another crossing.
	Crossings []int `json:"crossings,omitempty"`
	// ProjectedServerCapacityPerS is the server-bound capacity projected from Redis's CPU per
	// acquisition (1 / CPU per acquisition, per master), shown beside the knee; 0 when the
	// runs do not measure it.
	ProjectedServerCapacityPerS float64 `json:"projected_server_capacity_per_s,omitempty"`
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
	// Knee is the knee as a bracket; nil in files from before brackets.
	Knee *KneeBracket `json:"knee,omitempty"`
}

// SweepStep is one step of one driver. It is a plain value.
type SweepStep struct {
	// Step is 1-based: Sweep.Loads[Step-1] is a grid step's load; a refined step is numbered
	// on after the grid (len(Sweep.Loads)+1, …) in the order it ran.
	Step int     `json:"step"`
	Load float64 `json:"load"`
	// Refined is true for a step the refinement added between two grid steps.
	Refined bool `json:"refined,omitempty"`
	// Run is the index of the step's (first round's) run in File.Runs; -1 when the step
	// produced no run.
	Run int `json:"run"`
	// Runs are the indexes of every round's run, and RoundLatencyUS their SLO percentiles;
	// empty in files from before rounds.
	Runs           []int     `json:"runs,omitempty"`
	RoundLatencyUS []float64 `json:"round_latency_us,omitempty"`
	// Interval is the confidence interval of the SLO percentile across the rounds; nil with
	// fewer than two rounds.
	Interval *SweepInterval `json:"interval,omitempty"`
	// P50US is the acquire p50 of the rounds pooled; 0 in files from before rounds.
	P50US float64 `json:"p50_us,omitempty"`
	// ThroughputPerS is the achieved acquisitions per second of the measured phase: Run's
	// AchievedRate in an open loop (over the schedule's window), its ThroughputPerS otherwise.
	ThroughputPerS float64 `json:"throughput_per_s"`
	// LatencyUS is the SLO percentile of the acquire latency, in microseconds, of the rounds'
	// histograms pooled.
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
		known := d.KneeStep == 0
		for j, st := range d.Steps {
			if st.Step < 1 || (!st.Refined && st.Step > len(s.Loads)) {
				return fmt.Errorf("drivers[%d].steps[%d].step %d: want 1 to %d", i, j, st.Step, len(s.Loads))
			}
			if st.Run < -1 || st.Run >= runs {
				return fmt.Errorf("drivers[%d].steps[%d].run %d: the file has %d runs", i, j, st.Run, runs)
			}
			for _, r := range st.Runs {
				if r < 0 || r >= runs {
					return fmt.Errorf("drivers[%d].steps[%d].runs: %d: the file has %d runs", i, j, r, runs)
				}
			}
			known = known || st.Step == d.KneeStep
		}
		if !known || d.KneeStep < 0 {
			return fmt.Errorf("drivers[%d].knee_step %d: no such step", i, d.KneeStep)
		}
	}
	for i, f := range s.NoiseFloor {
		if f.Run < -1 || f.Run >= runs {
			return fmt.Errorf("noise_floor[%d].run %d: the file has %d runs", i, f.Run, runs)
		}
	}
	return nil
}
