package results

import "time"

// Pacings, the values of Run.Pacing.
const (
	// PacingClosed is the closed loop: every worker starts its next cycle when the last ends.
	PacingClosed = "closed"
	// PacingOpen is the open loop: cycles start on an arrival schedule at a target rate.
	PacingOpen = "open"
)

// SaturationTolerance is how far below the target rate an open loop's achieved rate may be
// before the run counts as saturated: 1%.
const SaturationTolerance = 0.01

// NewOpenLoopRecorder returns an empty Recorder for an open loop. Besides what NewRecorder's
// records, it keeps the service time: the acquire latency from the cycle's actual start. The
// acquire histogram gets the latency from the intended start instead (see StartedLate). It
// preallocates five histograms, about 700 KB in all. It is safe for concurrent use.
func NewOpenLoopRecorder() *Recorder {
	r := NewRecorder()
	r.service = newHistogram()
	r.startLag = newHistogram()
	return r
}

// StartedLate tells an open-loop recorder how long after its intended start the next cycle
// started. Until the next call, Record adds it to every acquire latency it records in the
// acquire histogram, which so measures from the intended start (coordinated-omission
// correction, as wrk2 does), and records the latency as given in the service-time histogram.
// On a recorder from NewRecorder it does nothing. It is not safe for concurrent use.
func (r *Recorder) StartedLate(by time.Duration) {
	if r.service != nil {
		r.lag = max(by, 0)
	}
}

// ScheduleLag records, in the start-lag histogram of an open-loop recorder, how long after its
// intended start a cycle that a free worker took on time actually started: the generator's own
// wake-up delay, kept apart from the lateness of slots no worker was free for (those are
// counted as late, not recorded here). On a recorder from NewRecorder it does nothing. It is
// not safe for concurrent use.
func (r *Recorder) ScheduleLag(by time.Duration) {
	if r.startLag != nil {
		_ = r.startLag.RecordValue(micros(by))
	}
}

// SetOpenLoop records an open-loop measured phase: the arrival process and the target rate
// (acquisitions/s), the length of the schedule that ran (window: the planned duration, or up to
// an interrupt), and the attempts that started late and were dropped (see workloads.OpenLoop).
// AchievedRate is the acquisitions over window; the run is Saturated when that is more than
// SaturationTolerance below the target, or any attempt was late or dropped. Call it after Fill.
// It is not safe for concurrent use on the same Run.
func (r *Run) SetOpenLoop(arrival string, target float64, window time.Duration, late, dropped int64) {
	r.Pacing, r.Arrival, r.TargetRate = PacingOpen, arrival, target
	r.Late, r.Dropped = late, dropped
	r.AchievedRate = 0
	if window > 0 {
		r.AchievedRate = float64(r.Acquisitions) / window.Seconds()
	}
	r.Saturated = r.AchievedRate < target*(1-SaturationTolerance) || late > 0 || dropped > 0
}
