package workloads

import "github.com/lockbench/lockbench/results"

// FIFOReporter is an Instance that tracks whether grants follow arrival order (see
// FIFOTracker). Implementations are safe for concurrent use.
type FIFOReporter interface {
	// FIFO returns the arrival-order fidelity of the measured phase's grants so far.
	FIFO() *results.FIFOFidelity
}

// recordFairness sets run.Fairness from the measured phase's per-worker recorders, and its FIFO
// fidelity when inst tracks it.
func recordFairness(run *results.Run, recs []*results.Recorder, inst Instance) {
	run.Fairness = results.FairnessOf(recs)
	if fr, ok := inst.(FIFOReporter); ok {
		run.Fairness.FIFO = fr.FIFO()
	}
}
