package results

import (
	"slices"
)

// MaxFairnessPerWorker bounds Fairness.PerWorker: runs with more workers keep the summary
// figures and the per-worker counts only, so a 100000-worker run does not write 100000 rows of
// latencies into the result file.
const MaxFairnessPerWorker = 1024

// Fairness is how evenly a run's grants went to its lock owners over the measured phase:
// per-worker acquisition counts and acquire waits, Jain's fairness index over the counts, the
// longest wait, and, for a run of several generator processes, Jain's index over the processes'
// totals. Every workload and driver gets it; FIFO is set for the contention workload. It is a
// plain value; it is not safe for concurrent modification.
type Fairness struct {
	// Workers is the number of workers, starved ones included.
	Workers int `json:"workers"`
	// JainWorkers is Jain's index over WorkerAcquisitions (see Jain): 1 when every worker got
	// as many grants as every other, 1/n when one worker got them all; 0 when there were none.
	JainWorkers float64 `json:"jain_workers"`
	// JainProcesses is Jain's index over the processes' acquisitions (Fleet.Processes); 0 for a
	// run of one process.
	JainProcesses float64 `json:"jain_processes,omitempty"`
	// MinAcquisitions and MaxAcquisitions are the fewest and most grants one worker got.
	MinAcquisitions int64 `json:"min_acquisitions"`
	MaxAcquisitions int64 `json:"max_acquisitions"`
	// StarvedWorkers is the workers that got no grant in the measured phase.
	StarvedWorkers int `json:"starved_workers"`
	// LongestWaitUS is the longest acquire wait of any recorded grant (starvation: a wait still
	// going when the phase ended is not in it; StarvedWorkers counts those workers).
	LongestWaitUS float64 `json:"longest_wait_us"`
	// WaitP99MinUS, WaitP99MedianUS and WaitP99MaxUS spread the per-worker p99 acquire waits
	// (over workers with a grant): far apart means some workers wait much longer than others.
	WaitP99MinUS    float64 `json:"wait_p99_min_us"`
	WaitP99MedianUS float64 `json:"wait_p99_median_us"`
	WaitP99MaxUS    float64 `json:"wait_p99_max_us"`
	// WorkerAcquisitions is each worker's acquisitions in the measured phase, in worker order;
	// in a run of several processes, process 0's workers first, then process 1's, and so on.
	WorkerAcquisitions []int64 `json:"worker_acquisitions"`
	// PerWorker has each worker's share, in worker order, when there are at most
	// MaxFairnessPerWorker workers.
	PerWorker []WorkerShare `json:"per_worker,omitempty"`
	// FIFO is the arrival-order fidelity of the grants, for workloads that track it.
	FIFO *FIFOFidelity `json:"fifo,omitempty"`
}

// WorkerShare is one worker's grants and acquire waits over the measured phase.
type WorkerShare struct {
	Acquisitions int64   `json:"acquisitions"`
	WaitP50US    float64 `json:"wait_p50_us"`
	WaitP99US    float64 `json:"wait_p99_us"`
	WaitMaxUS    float64 `json:"wait_max_us"`
}

// FIFOFidelity is the share of grants made in arrival order among waiters that were queued.
// Arrival is when a worker called Lock on a key; a grant is queued when, at its arrival, the key
// was held or had other waiters (a grant of a free key is in order trivially and not counted);
// it is in order when no waiter that arrived earlier at the same key was still waiting at the
// grant. Arrivals are seen at the client, so two calls made within one round trip may reach
// Redis in the other order: on loopback that is rare, and it lowers the figure, never raises it.
type FIFOFidelity struct {
	QueuedGrants int64 `json:"queued_grants"`
	InOrder      int64 `json:"in_order"`
	// Fidelity is InOrder / QueuedGrants, 0 when there were no queued grants.
	Fidelity float64 `json:"fidelity"`
}

// NewFIFOFidelity returns the fidelity of inOrder grants out of queued.
func NewFIFOFidelity(queued, inOrder int64) *FIFOFidelity {
	f := &FIFOFidelity{QueuedGrants: queued, InOrder: inOrder}
	if queued > 0 {
		f.Fidelity = float64(inOrder) / float64(queued)
	}
	return f
}

// FairnessOf computes the fairness of the workers whose recorders are recs (nil entries count
// as workers with no grant). Call it once the workers have stopped.
func FairnessOf(recs []*Recorder) *Fairness {
	shares := make([]WorkerShare, len(recs))
	for i, r := range recs {
		if r != nil {
			shares[i] = WorkerShare{
				Acquisitions: r.cycle.TotalCount(),
				WaitP50US:    float64(r.acquire.ValueAtQuantile(50)),
				WaitP99US:    float64(r.acquire.ValueAtQuantile(99)),
				WaitMaxUS:    float64(r.acquire.Max()),
			}
		}
	}
	counts := make([]int64, len(shares))
	for i, s := range shares {
		counts[i] = s.Acquisitions
	}
	f := &Fairness{}
	f.setCounts(counts)
	f.setShares(shares)
	return f
}

// setCounts sets the figures that need only the per-worker counts.
func (f *Fairness) setCounts(counts []int64) {
	f.Workers, f.WorkerAcquisitions, f.JainWorkers = len(counts), counts, Jain(counts)
	f.MinAcquisitions, f.MaxAcquisitions, f.StarvedWorkers = 0, 0, 0
	if len(counts) > 0 {
		f.MinAcquisitions, f.MaxAcquisitions = slices.Min(counts), slices.Max(counts)
	}
	for _, n := range counts {
		if n == 0 {
			f.StarvedWorkers++
		}
	}
}

// setShares sets the wait figures from every worker's share, and keeps the shares when there
// are at most MaxFairnessPerWorker.
func (f *Fairness) setShares(shares []WorkerShare) {
	var p99s []float64
	for _, s := range shares {
		if s.Acquisitions > 0 {
			p99s = append(p99s, s.WaitP99US)
			f.LongestWaitUS = max(f.LongestWaitUS, s.WaitMaxUS)
		}
	}
	if len(p99s) > 0 {
		slices.Sort(p99s)
		f.WaitP99MinUS, f.WaitP99MaxUS = p99s[0], p99s[len(p99s)-1]
		f.WaitP99MedianUS = p99s[len(p99s)/2]
	}
	f.PerWorker = nil
	if len(shares) <= MaxFairnessPerWorker {
		f.PerWorker = shares
	}
}

// Jain returns Jain's fairness index of xs, (Σx)² / (n·Σx²), in [1/n, 1]: 1 when every x is
// equal, 1/n when one takes everything, and 0 for no values or all zeros (nothing to be fair
// about). It is safe for concurrent use.
func Jain(xs []int64) float64 {
	var sum, sq float64
	for _, x := range xs {
		f := float64(x)
		sum += f
		sq += f * f
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// WorkerAcquisitions returns each recorder's recorded cycles, in order; a nil recorder counts 0.
// It is safe for concurrent use provided none of rs is recording.
func WorkerAcquisitions(rs []*Recorder) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		if r != nil {
			out[i] = r.cycle.TotalCount()
		}
	}
	return out
}

// SetWorkerFairness records each worker's acquisitions and the figures that follow from the
// counts alone (Jain's index, fewest and most, starved workers). It is not safe for concurrent
// use on the same Run.
func (r *Run) SetWorkerFairness(perWorker []int64) {
	if r.Fairness == nil {
		r.Fairness = &Fairness{}
	}
	r.Fairness.setCounts(perWorker)
}
