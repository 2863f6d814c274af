package results

import (
	"errors"
	"fmt"
	"maps"
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
}

// ProcessResult is one generator process's share of a run: its own figures and histograms,
// kept beside the merged ones. It is a plain value and safe for concurrent use.
type ProcessResult struct {
	Index int    `json:"index"`
	Host  string `json:"host,omitempty"`
	// Image is the id of the container image the process ran in (lockbench run --generators
	// docker sets it); Version is the lockbench version it ran. Shares of one run must agree.
	Image            string      `json:"image,omitempty"`
	Version          string      `json:"version,omitempty"`
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

// fleetKey is everything that must be equal for two process runs to be shares of one run.
func fleetKey(r *Run) string {
	settings := slices.Sorted(maps.Keys(r.DriverSettings))
	for i, k := range settings {
		settings[i] = k + "=" + r.DriverSettings[k]
	}
	return fmt.Sprintf("driver=%s round=%d %s seed=%d warmup_s=%g settings=[%s] procs=%d start_at=%s",
		r.Driver, r.Round, r.Case(), r.Seed, r.WarmupS, strings.Join(settings, ","),
		r.Fleet.Procs, r.Fleet.StartAt.UTC().Format(time.RFC3339Nano))
}

// MergeProcesses merges the shares of one run, each the run of one process (see SetProcess),
// into the run of them all, losslessly: the histograms are merged, not their percentiles
// averaged, and the percentiles are read from the merged histograms. Counts (acquisitions,
// errors, violations, commands, CPU, driver counts, workers) add up; the throughput is the sum
// of the processes' throughputs, each over its own measured phase, and the duration the longest
// phase; the timeline adds up interval by interval (the common start time aligns them). Each
// process's own figures stay in Fleet.Processes; the processes of the plan with no share here
// are listed in Fleet.Lost and make the run incomplete. Parts of another configuration, driver,
// round, seed, process count or start time, or a process given twice, give an error wrapping
// ErrFleetMismatch. The parts are not modified. It is safe for concurrent use.
func MergeProcesses(parts []Run) (Run, error) {
	if len(parts) == 0 {
		return Run{}, fmt.Errorf("%w: nothing to merge", ErrFleetMismatch)
	}
	seen := make(map[int]bool)
	var key string
	for i := range parts {
		p := &parts[i]
		if p.Fleet == nil || len(p.Fleet.Processes) != 1 {
			return Run{}, fmt.Errorf("%w: part %d (%s) is not the run of one generator process (lockbench worker)", ErrFleetMismatch, i+1, p.Driver)
		}
		k := fleetKey(p)
		if i == 0 {
			key = k
		} else if k != key {
			return Run{}, fmt.Errorf("%w: part %d ran %s, part 1 ran %s", ErrFleetMismatch, i+1, k, key)
		}
		idx := p.Fleet.Processes[0].Index
		if idx < 0 || idx >= p.Fleet.Procs {
			return Run{}, fmt.Errorf("%w: part %d is process %d of %d", ErrFleetMismatch, i+1, idx, p.Fleet.Procs)
		}
		if seen[idx] {
			return Run{}, fmt.Errorf("%w: process %d given twice", ErrFleetMismatch, idx)
		}
		seen[idx] = true
	}
	sorted := slices.Clone(parts)
	slices.SortFunc(sorted, func(a, b Run) int { return a.Fleet.Processes[0].Index - b.Fleet.Processes[0].Index })

	first := sorted[0]
	m := Run{
		Driver: first.Driver, Round: first.Round, DriverSettings: maps.Clone(first.DriverSettings),
		Workload: first.Workload, Topology: first.Topology, TopologySpec: first.TopologySpec,
		Addrs: slices.Clone(first.Addrs), Keys: first.Keys, KeyDist: first.KeyDist, HoldUS: first.HoldUS,
		Seed: first.Seed, WarmupS: first.WarmupS, StartedAt: first.StartedAt, Complete: true,
	}
	fleet := &Fleet{Procs: first.Fleet.Procs, StartAt: first.Fleet.StartAt, CrossProcessChecker: true}
	acq, rel, cyc := newHistogram(), newHistogram(), newHistogram()
	var incomplete []string
	var timelines []*Timeline
	var nodes map[string]*NodeResult
	var nodeOrder []string
	for i := range sorted {
		p := &sorted[i]
		a, r, c, err := p.Histograms.Decode()
		if err != nil {
			return Run{}, fmt.Errorf("process %d: %w", p.Fleet.Processes[0].Index, err)
		}
		// One geometry everywhere (MinLatencyUS..MaxLatencyUS, SigFigs): nothing is dropped.
		acq.Merge(a)
		rel.Merge(r)
		cyc.Merge(c)
		m.Concurrency += p.Concurrency
		m.DurationS = max(m.DurationS, p.DurationS)
		m.ThroughputPerS += p.ThroughputPerS
		m.Violations += p.Violations
		m.FencingViolations += p.FencingViolations
		m.MaxConcurrentReaders = max(m.MaxConcurrentReaders, p.MaxConcurrentReaders)
		m.ErrorsByKind = addCounts(m.ErrorsByKind, p.ErrorsByKind)
		m.RedisCommands += p.RedisCommands
		m.RedisCommandsByName = addCounts(m.RedisCommandsByName, p.RedisCommandsByName)
		m.ClientCPUUS += p.ClientCPUUS
		m.ServerCPUUS += p.ServerCPUUS
		for _, n := range p.Nodes {
			if nodes == nil {
				nodes = make(map[string]*NodeResult)
			}
			if e, ok := nodes[n.Addr]; ok {
				e.Commands += n.Commands
				e.CPUUS += n.CPUUS
			} else {
				nodes[n.Addr] = &NodeResult{Addr: n.Addr, Role: n.Role, Commands: n.Commands, CPUUS: n.CPUUS}
				nodeOrder = append(nodeOrder, n.Addr)
			}
		}
		if d := p.DriverCounts; d != nil {
			if m.DriverCounts == nil {
				m.DriverCounts = &DriverCounts{}
			}
			m.DriverCounts.Attempts += d.Attempts
			m.DriverCounts.FailedAttempts += d.FailedAttempts
			m.DriverCounts.LocalHandoffs += d.LocalHandoffs
		}
		if p.StartedAt.Before(m.StartedAt) {
			m.StartedAt = p.StartedAt
		}
		if !p.Complete {
			m.Complete = false
			incomplete = append(incomplete, fmt.Sprintf("process %d: %s", p.Fleet.Processes[0].Index, p.Incomplete))
		}
		if p.Timeline != nil {
			timelines = append(timelines, p.Timeline)
		}
		fleet.CrossProcessChecker = fleet.CrossProcessChecker && p.Fleet.CrossProcessChecker
		fleet.SharedViolations = max(fleet.SharedViolations, p.Fleet.SharedViolations)
		fleet.Processes = append(fleet.Processes, p.Fleet.Processes[0])
	}
	latest := m.StartedAt
	for i := range sorted {
		if sorted[i].StartedAt.After(latest) {
			latest = sorted[i].StartedAt
		}
	}
	fleet.StartSkewMS = float64(latest.Sub(m.StartedAt)) / float64(time.Millisecond)
	for idx := range fleet.Procs {
		if !seen[idx] {
			fleet.Lost = append(fleet.Lost, idx)
		}
	}
	if len(fleet.Lost) > 0 {
		m.Complete = false
		incomplete = append(incomplete, fmt.Sprintf("no result from process %s of %d", joinInts(fleet.Lost), fleet.Procs))
	}
	m.Incomplete = strings.Join(incomplete, "; ")
	for _, a := range nodeOrder {
		m.Nodes = append(m.Nodes, *nodes[a])
	}
	if err := m.fillMerged(acq, rel, cyc); err != nil {
		return Run{}, err
	}
	if err := mergeOpenLoop(&m, sorted); err != nil {
		return Run{}, err
	}
	m.Fleet = fleet
	m.mergeFairness(sorted)
	if len(timelines) == len(sorted) {
		tl, err := mergeTimelines(timelines)
		if err != nil {
			return Run{}, err
		}
		m.Timeline = tl
	}
	return m, nil
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

// mergeTimelines adds up the processes' timelines point by point: the common start time lines
// their intervals up to within the processes' start skew. The merged points start at the
// earliest start; a point lasts as long as the longest of its parts.
func mergeTimelines(tls []*Timeline) (*Timeline, error) {
	out := &Timeline{Start: tls[0].Start, IntervalS: tls[0].IntervalS, Points: []TimelinePoint{}}
	n := 0
	for _, tl := range tls {
		if tl.Start.Before(out.Start) {
			out.Start = tl.Start
		}
		n = max(n, len(tl.Points))
	}
	h := newHistogram()
	start := 0.0
	for i := range n {
		h.Reset()
		p := TimelinePoint{StartS: start}
		for _, tl := range tls {
			if i >= len(tl.Points) {
				continue
			}
			q := tl.Points[i]
			ph, err := decode(q.Histogram)
			if err != nil {
				return nil, fmt.Errorf("timeline point %d: %w", i, err)
			}
			h.Merge(ph)
			p.Errors += q.Errors
			p.DurationS = max(p.DurationS, q.DurationS)
		}
		p.Acquisitions = h.TotalCount()
		if p.DurationS > 0 {
			p.ThroughputPerS = float64(p.Acquisitions) / p.DurationS
		}
		if p.Acquisitions > 0 {
			p.AcquireP50US = float64(h.ValueAtQuantile(50))
			p.AcquireP99US = float64(h.ValueAtQuantile(99))
			p.AcquireMaxUS = float64(h.Max())
		}
		var err error
		if p.Histogram, err = encode(h); err != nil {
			return nil, fmt.Errorf("encode timeline histogram: %w", err)
		}
		out.Points = append(out.Points, p)
		start += p.DurationS
	}
	return out, nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// MergeFiles merges the result files of the generator processes of one run (lockbench worker)
// into one file, as lockbench run --procs writes it: one merged run (see MergeProcesses), the
// first file's topology and Redis version, complete only when every file and the merged run
// are. The files' skips are kept when they ran nothing. Files that hold anything but one
// process's run or skip, or runs of different configurations, give an error wrapping
// ErrFleetMismatch. It is safe for concurrent use.
func MergeFiles(version string, args []string, files []*File) (*File, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no files", ErrFleetMismatch)
	}
	out := NewFile(version, args)
	out.Topology, out.RedisVersion = files[0].Topology, files[0].RedisVersion
	var parts []Run
	for i, f := range files {
		if len(f.Runs) > 1 {
			return nil, fmt.Errorf("%w: file %d has %d runs; a worker's file has one", ErrFleetMismatch, i+1, len(f.Runs))
		}
		parts = append(parts, f.Runs...)
		out.Complete = out.Complete && f.Complete
		if out.RedisVersion == "" {
			out.RedisVersion = f.RedisVersion
		}
	}
	if len(parts) == 0 {
		for _, f := range files {
			out.Skipped = append(out.Skipped, f.Skipped...)
		}
		if len(out.Skipped) == 0 {
			return nil, fmt.Errorf("%w: no runs in the files", ErrFleetMismatch)
		}
		return out, nil
	}
	run, err := MergeProcesses(parts)
	if err != nil {
		return nil, err
	}
	out.Runs = []Run{run}
	out.Complete = out.Complete && run.Complete
	return out, nil
}
