package sweep

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/results"
)

// LatencyUS returns the acquire latency of run at percentile (0 to 100) in microseconds, read
// from the run's encoded histogram so that any percentile is exact to the histogram's
// precision, not only those the result file lists. It is safe for concurrent use.
func LatencyUS(run *results.Run, percentile float64) (float64, error) {
	acquire, _, _, err := run.Histograms.Decode()
	if err != nil {
		return 0, err
	}
	return float64(acquire.ValueAtQuantile(percentile)), nil
}

// judge gives a finished step its verdict on run (a step's rounds pooled, see pool) and lat,
// its SLO percentile in microseconds, and says why the driver should take no further step
// ("" to go on). best is the highest throughput of the driver's steps below this load; prev is
// the verdict of its step just below ("" for none). The interval across rounds (ok, over or
// uncertain) is the caller's.
//
// The order matters: a step that failed or was cut short says nothing about capacity; a step
// that did not achieve its load is saturated whatever its latency (the latency of a backlog is
// not the latency of the load); only an achieved load is held against the SLO.
func (o *Options) judge(load float64, run *results.Run, lat, best float64, prev string) (results.SweepStep, string) {
	st := results.SweepStep{Load: load, ThroughputPerS: run.ThroughputPerS, Verdict: results.VerdictOK}
	if run.AchievedRate > 0 {
		// An open loop's rate over its schedule; the phase's own time adds the drain.
		st.ThroughputPerS = run.AchievedRate
	}
	st.LatencyUS = lat
	limitUS := float64(o.SLO.Limit) / float64(time.Microsecond)
	switch {
	case run.Aborted != "" && run.Errors == 0 && run.Violations == 0:
		// Stopped once already past the SLO (--abort-on-fail): over, whatever the few
		// acquisitions between the check and the stop did to the percentile.
		st.Verdict, st.Reason = results.VerdictOver, "stopped early: "+run.Aborted
		if o.Duration > 0 {
			st.SavedS = max(o.Duration.Seconds()-run.DurationS, 0)
		}
		if lat > o.StopFactor*limitUS {
			return st, fmt.Sprintf("%s %s is more than %g × the SLO's %s", o.SLO.Name, fmtLatency(lat), o.StopFactor, fmtLatency(limitUS))
		}
		return st, ""
	case !run.Complete:
		st.Verdict, st.Reason = results.VerdictIncomplete, "interrupted"
		if run.Incomplete != "" {
			st.Reason = run.Incomplete
		}
		return st, st.Reason
	case run.Errors > 0 || run.Violations > 0:
		st.Verdict, st.Reason = results.VerdictFailed, fmt.Sprintf("%d errors, %d safety violations", run.Errors, run.Violations)
		return st, st.Reason
	case run.Acquisitions == 0:
		st.Verdict, st.Reason = results.VerdictSaturated, "no acquisition completed in the measured phase"
		return st, st.Reason
	}
	if reason := o.saturation(load, run, best); reason != "" {
		st.Verdict, st.Reason = results.VerdictSaturated, reason
		if o.Mode == results.SweepConcurrency && prev != results.VerdictSaturated {
			// Two closed-loop steps compare two measurements, and on a shared machine one of
			// them can dip by more than the margin for reasons of its own; past the peak, the
			// next step (twice the workers, say) falls short too. An open loop's target is
			// exact, and a backlog only grows: there one saturated step ends the driver.
			return st, ""
		}
		if o.Mode == results.SweepConcurrency {
			reason = "second saturated step in a row: " + reason
		}
		return st, reason
	}
	if lat > limitUS {
		st.Verdict = results.VerdictOver
		if lat > o.StopFactor*limitUS {
			return st, fmt.Sprintf("%s %s is more than %g × the SLO's %s", o.SLO.Name, fmtLatency(lat), o.StopFactor, fmtLatency(limitUS))
		}
	}
	return st, ""
}

// saturation says why run did not achieve load, or "" when it did.
//
// Closed loop (concurrency): the workers always "arrive", so a load is achieved unless the
// added workers got less done: throughput more than SaturationMargin below the best earlier
// step's is past the peak (more workers only queue and contend). Open loop (rate): the
// achieved rate must be within SaturationMargin of the target, and the schedule kept (see
// openLoopSaturation).
func (o *Options) saturation(load float64, run *results.Run, best float64) string {
	if o.Mode == results.SweepConcurrency {
		if best > 0 && run.ThroughputPerS < (1-o.SaturationMargin)*best {
			return fmt.Sprintf("%s acq/s is %.0f%% below the best earlier step's %s: more workers got less done",
				fmtRate(run.ThroughputPerS), 100*(1-run.ThroughputPerS/best), fmtRate(best))
		}
		return ""
	}
	return o.openLoopSaturation(load, run)
}
