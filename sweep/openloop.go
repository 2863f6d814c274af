package sweep

import (
	"fmt"

	"github.com/lockbench/lockbench/results"
)

// openLoopSaturation says why an open-loop run did not achieve its target rate, or "" when it
// did: its achieved rate is more than SaturationMargin below the target, or more than
// SaturationMargin of its schedule was not kept (attempts started late because every worker
// was busy, or dropped because none was free before the end).
//
// The run's own Saturated flag (any late or dropped attempt, or 1% short) is stricter than a
// sweep needs: on a shared machine a few attempts start late for reasons of the machine, and
// their latency, measured from the intended start, is in the SLO percentile anyway.
func (o *Options) openLoopSaturation(target float64, run *results.Run) string {
	achieved := run.AchievedRate
	if achieved == 0 {
		achieved = run.ThroughputPerS // a run from before open-loop accounts
	}
	if achieved < (1-o.SaturationMargin)*target {
		return fmt.Sprintf("achieved %s acq/s, %.0f%% below the target %s/s", fmtRate(achieved), 100*(1-achieved/target), fmtRate(target))
	}
	if scheduled := run.Acquisitions + run.Dropped; scheduled > 0 {
		if missed := run.Late + run.Dropped; float64(missed) > o.SaturationMargin*float64(scheduled) {
			return fmt.Sprintf("%.0f%% of the schedule not kept (%d attempts late, %d dropped: all --concurrency workers busy)",
				100*float64(missed)/float64(scheduled), run.Late, run.Dropped)
		}
	}
	return ""
}
