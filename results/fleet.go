package results

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// ErrFleetMismatch is wrapped by MergeProcesses' errors for parts that are not shares of one
// run: another configuration, driver, start time or process count, or a process given twice.
var ErrFleetMismatch = errors.New("not parts of one run")

// Fleet describes a run made by several generator processes (lockbench run --procs, or
// lockbench worker processes merged by lockbench merge), or one process's share of such a run.
// It is a plain value; it is not safe for concurrent modification.
type Fleet struct {
	// Procs is the number of processes the run was planned with.
	Procs int `json:"procs"`
	// StartAt is the common start time every process waited for, after connecting, before its
	// warm-up.
	StartAt time.Time `json:"start_at"`
	// Processes has one entry per process whose result is here, by index; a process's own run
	// has only itself.
	Processes []ProcessResult `json:"processes"`
	// Lost lists the indexes of the processes whose result is missing (crashed, killed, or not
	// given to merge); the run is then incomplete.
	Lost []int `json:"lost,omitempty"`
	// CrossProcessChecker is true when every process's safety checkers kept their state in
	// memory all of them mapped (processes on one machine), so that each saw the others'
	// holders; false: each process checked its own holders only.
	CrossProcessChecker bool `json:"cross_process_checker"`
	// StartSkewMS is how far apart the processes' warm-ups began: the latest warm-up
	// start minus the earliest, in milliseconds (0 for one process). A process that connected
	// after the common start time began late, and shows here.
	StartSkewMS float64 `json:"start_skew_ms"`
	// SharedViolations is what the shared checker state counted over all processes, read from
	// that memory after the run rather than from the processes' reports, so a process that
	// crashed still counts; 0 without a shared checker.
	SharedViolations int64 `json:"shared_violations,omitempty"`
	// RunID names the run the processes were started as (lockbench run, or whoever started the
	// workers with --run), so that results collected from a shared store are known to be of
	// one run; empty when none was given.
	RunID string `json:"run_id,omitempty"`
	// StartSpreadMS is how far apart the processes' warm-ups began by the deployment's clock
	// (the latest start error minus the earliest, see ClockSync), when every process read it;
	// unlike StartSkewMS it does not trust the machines' clocks to agree.
	StartSpreadMS float64 `json:"start_spread_ms,omitempty"`
	// Warnings say what makes the merged figures less than they seem (a start spread above the
	// warm-up).
	Warnings []string `json:"warnings,omitempty"`
}

// ProcessResult is one generator process's share of a run: its own figures and histograms,
// kept beside the merged ones. It is a plain value and safe for concurrent use.
type ProcessResult struct {
	Index            int         `json:"index"`
	Host             string      `json:"host,omitempty"`
	Pid              int         `json:"pid,omitempty"`
	Concurrency      int         `json:"concurrency"`
	DurationS        float64     `json:"duration_s"`
	Acquisitions     int64       `json:"acquisitions"`
	ThroughputPerS   float64     `json:"throughput_per_s"`
	Errors           int64       `json:"errors"`
	Violations       int64       `json:"violations"`
	AcquireLatencyUS Percentiles `json:"acquire_latency_us"`
	// JainWorkers is Jain's index over this process's workers.
	JainWorkers float64    `json:"jain_workers"`
	Complete    bool       `json:"complete"`
	Incomplete  string     `json:"incomplete_reason,omitempty"`
	Histograms  Histograms `json:"histograms"`
	// Version is the lockbench version the process ran, and Image the container image it ran
	// in (the LOCKBENCH_IMAGE its orchestrator set; empty outside one): merge refuses processes
	// that ran different builds.
	Version string `json:"version,omitempty"`
	Image   string `json:"image,omitempty"`
	// Net is the network conditions lockbench put between this process's clients and Redis
	// (its --net: lockbench run --net, or --net-proc for this process); empty: none.
	Net string `json:"net,omitempty"`
	// Clock is how the process placed itself on the deployment's clock; nil when it did not
	// (a result from before, or a process given no start time).
	Clock *ClockSync `json:"clock,omitempty"`
}

// SetProcess marks r as the share of process index of a run of procs processes that started
// together at startAt, copying r's own figures into its one ProcessResult. Call it after
// everything else is set. It is not safe for concurrent use on the same Run.
func (r *Run) SetProcess(index, procs int, startAt time.Time, host string, pid int, crossProcess bool) {
	p := ProcessResult{
		Index: index, Host: host, Pid: pid, Concurrency: r.Concurrency, DurationS: r.DurationS,
		Acquisitions: r.Acquisitions, ThroughputPerS: r.ThroughputPerS, Errors: r.Errors,
		Violations: r.Violations, AcquireLatencyUS: r.AcquireLatencyUS,
		Complete: r.Complete, Incomplete: r.Incomplete, Histograms: r.Histograms,
	}
	if r.Fairness != nil {
		p.JainWorkers = r.Fairness.JainWorkers
	}
	r.Fleet = &Fleet{Procs: procs, StartAt: startAt.UTC(), Processes: []ProcessResult{p}, CrossProcessChecker: crossProcess}
}

// MergeProcesses merges the shares of one run, each the run of one process (see SetProcess),
// into the run of them all, losslessly (see Merger): the shares are added in index order. Parts
// of another configuration, driver, round, seed, process count, start time, run id, lockbench
// version or image, or a process given twice, give an error wrapping ErrFleetMismatch that names
// the process and the field. The parts are not modified. It is safe for concurrent use.
func MergeProcesses(parts []Run) (Run, error) {
	if len(parts) == 0 {
		return Run{}, fmt.Errorf("%w: nothing to merge", ErrFleetMismatch)
	}
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	index := func(i int) int {
		if f := parts[i].Fleet; f != nil && len(f.Processes) == 1 {
			return f.Processes[0].Index
		}
		return -1
	}
	slices.SortStableFunc(order, func(a, b int) int { return index(a) - index(b) })
	g := NewMerger()
	for _, i := range order {
		if err := g.Add(&parts[i]); err != nil {
			return Run{}, err
		}
	}
	return g.Run()
}

// fillMerged sets the figures read from the merged histograms; the counts set by the caller
// (errors by kind, commands, CPU) give the totals and ratios.
func (r *Run) fillMerged(acq, rel, cyc *hdrhistogram.Histogram) error {
	r.Acquisitions = cyc.TotalCount()
	r.AcquireLatencyUS, r.ReleaseLatencyUS, r.CycleLatencyUS = percentiles(acq), percentiles(rel), percentiles(cyc)
	r.Errors = 0
	for _, n := range r.ErrorsByKind {
		r.Errors += n
	}
	r.setRatios()
	var err error
	if r.Histograms.Acquire, err = encode(acq); err != nil {
		return fmt.Errorf("encode acquire histogram: %w", err)
	}
	if r.Histograms.Release, err = encode(rel); err != nil {
		return fmt.Errorf("encode release histogram: %w", err)
	}
	if r.Histograms.Cycle, err = encode(cyc); err != nil {
		return fmt.Errorf("encode cycle histogram: %w", err)
	}
	return nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// MergeFiles merges the result files of the generator processes of one run (lockbench worker)
// into one file, as lockbench run --procs writes it (see FileMerger). It is safe for concurrent
// use.
func MergeFiles(version string, args []string, files []*File) (*File, error) {
	g := NewFileMerger(version, args)
	for _, f := range files {
		if err := g.Add(f); err != nil {
			return nil, err
		}
	}
	return g.File()
}
