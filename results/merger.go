package results

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Merger merges the shares of one run (each the run of one process, see SetProcess) into the run
// of them all, one share at a time: the histograms of each share are decoded, merged into the
// running totals and dropped, so merging N shares holds one decoded share, the totals and the
// per-process summaries — not N runs. The histograms are merged, not their percentiles
// averaged. Counts (acquisitions, errors, violations, commands, CPU, driver counts, workers) add
// up; the throughput is the sum of the processes' throughputs, each over its own measured phase,
// and the duration the longest phase; the timelines add up interval by interval (the common
// start time aligns them). Each process's own figures stay in Fleet.Processes, by index; the
// processes of the plan with no share are listed in Fleet.Lost and make the run incomplete.
// Shares may come in any order. A Merger is not safe for concurrent use.
type Merger struct {
	ref     *Run // the first share's identity (no histograms, no timeline)
	refIdx  int
	m       Run
	fleet   Fleet
	seen    map[int]bool
	n       int
	latest  time.Time
	acq     *hdrhistogram.Histogram
	rel     *hdrhistogram.Histogram
	cyc     *hdrhistogram.Histogram
	service *hdrhistogram.Histogram
	lag     *hdrhistogram.Histogram // open loops' start lag (StartLagUS)

	incomplete map[int]string
	nodes      map[string]*mergedNode
	fair       map[int]*Fairness // each process's fairness (counts only: no histograms)
	perProc    map[int]int64
	anyNoFair  bool

	timelines int // shares with a timeline
	tl        *Timeline
	tlHists   []*hdrhistogram.Histogram
}

// mergedNode is one server's figures added up, and where it was first seen, so that the merged
// nodes list in the order of the lowest process that measured them.
type mergedNode struct {
	NodeResult
	index, pos int
}

// NewMerger returns an empty Merger.
func NewMerger() *Merger {
	return &Merger{
		seen: make(map[int]bool), acq: newHistogram(), rel: newHistogram(), cyc: newHistogram(),
		incomplete: make(map[int]string), nodes: make(map[string]*mergedNode),
		fair: make(map[int]*Fairness), perProc: make(map[int]int64),
	}
}

// Added returns how many shares have been added.
func (g *Merger) Added() int { return g.n }

// Add merges p, the run of one process. A share that is not one process's run, of another run
// than the first share (see Mismatch), given twice or with an index outside the plan gives an
// error wrapping ErrFleetMismatch that names the process; a histogram that does not decode, an
// error naming it. p is not modified and not kept: the caller may drop it.
func (g *Merger) Add(p *Run) error {
	if p.Fleet == nil || len(p.Fleet.Processes) != 1 {
		return fmt.Errorf("%w: part %d (%s) is not the run of one generator process (lockbench worker)", ErrFleetMismatch, g.n+1, p.Driver)
	}
	idx := p.Fleet.Processes[0].Index
	if idx < 0 || idx >= p.Fleet.Procs {
		return fmt.Errorf("%w: part %d is process %d of %d", ErrFleetMismatch, g.n+1, idx, p.Fleet.Procs)
	}
	if g.ref == nil {
		g.start(p)
	} else if field, a, b := Mismatch(g.ref, p); field != "" {
		return fmt.Errorf("%w: process %d differs from process %d in %s: %s, not %s", ErrFleetMismatch, idx, g.refIdx, field, b, a)
	}
	if g.seen[idx] {
		return fmt.Errorf("%w: process %d given twice", ErrFleetMismatch, idx)
	}
	a, r, c, err := p.Histograms.Decode()
	if err != nil {
		return fmt.Errorf("process %d: %w", idx, err)
	}
	var service, lag *hdrhistogram.Histogram
	if p.Histograms.Service != "" {
		if service, err = decode(p.Histograms.Service); err != nil {
			return fmt.Errorf("process %d: service-time histogram: %w", idx, err)
		}
	}
	if p.Histograms.StartLag != "" {
		if lag, err = decode(p.Histograms.StartLag); err != nil {
			return fmt.Errorf("process %d: start-lag histogram: %w", idx, err)
		}
	}
	if err := g.addTimeline(idx, p.Timeline); err != nil {
		return err
	}
	g.seen[idx] = true
	g.n++
	// One geometry everywhere (MinLatencyUS..MaxLatencyUS, SigFigs): nothing is dropped.
	g.acq.Merge(a)
	g.rel.Merge(r)
	g.cyc.Merge(c)
	if service != nil {
		if g.service == nil {
			g.service = newHistogram()
		}
		g.service.Merge(service)
	}
	if lag != nil {
		if g.lag == nil {
			g.lag = newHistogram()
		}
		g.lag.Merge(lag)
	}
	m := &g.m
	m.Concurrency += p.Concurrency
	m.DurationS = max(m.DurationS, p.DurationS)
	// A process's own faults (a stall it carried out) are its own: each is kept (sorted in
	// Run, so that the order of the shares does not show).
	m.Faults = append(m.Faults, p.Faults...)
	m.ThroughputPerS += p.ThroughputPerS
	m.Violations += p.Violations
	if g.n == 1 {
		m.Checkers = slices.Clone(p.Checkers)
	} else {
		m.Checkers = commonCheckers(m.Checkers, p.Checkers)
	}
	if p.Referee != nil {
		if m.Referee == nil {
			m.Referee = &Referee{}
		}
		m.Referee.add(p.Referee)
	}
	if p.Resource != nil {
		if m.Resource == nil {
			m.Resource = &Resource{}
		}
		m.Resource.add(p.Resource)
	}
	m.FencingViolations += p.FencingViolations
	m.MaxConcurrentReaders = max(m.MaxConcurrentReaders, p.MaxConcurrentReaders)
	m.ErrorsByKind = addCounts(m.ErrorsByKind, p.ErrorsByKind)
	m.ErrorSamples = mergeSamples(m.ErrorSamples, p.ErrorSamples)
	m.ServerErrors = mergeServerErrors(m.ServerErrors, p.ServerErrors)
	m.RedisCommands += p.RedisCommands
	m.RedisCommandsByName = addCounts(m.RedisCommandsByName, p.RedisCommandsByName)
	m.ClientCPUUS += p.ClientCPUUS
	m.AdapterCPUUS += p.AdapterCPUUS
	m.ServerCPUUS += p.ServerCPUUS
	m.TargetRate += p.TargetRate
	m.AchievedRate += p.AchievedRate
	m.Late += p.Late
	m.Dropped += p.Dropped
	m.Saturated = m.Saturated || p.Saturated
	for pos, n := range p.Nodes {
		if e, ok := g.nodes[n.Addr]; ok {
			e.Commands += n.Commands
			e.CPUUS += n.CPUUS
			if idx < e.index {
				e.index, e.pos = idx, pos
			}
		} else {
			g.nodes[n.Addr] = &mergedNode{NodeResult: NodeResult{Addr: n.Addr, Role: n.Role, Commands: n.Commands, CPUUS: n.CPUUS}, index: idx, pos: pos}
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
	if w := p.Waiting; w != nil {
		// Every process has its own client and subscriptions: counts add up, and the sum of
		// the processes' peaks bounds the fleet's peak from above.
		if m.Waiting == nil {
			m.Waiting = &WaitCounts{}
		}
		m.Waiting.Subscribes += w.Subscribes
		m.Waiting.Unsubscribes += w.Unsubscribes
		m.Waiting.PeakChannels += w.PeakChannels
		m.Waiting.ChannelsAfter += w.ChannelsAfter
		m.Waiting.WokenByMessage += w.WokenByMessage
		m.Waiting.EndedWithoutWake += w.EndedWithoutWake
		m.Waiting.SubscribeTimeouts += w.SubscribeTimeouts
	}
	if p.StartedAt.Before(m.StartedAt) {
		m.StartedAt = p.StartedAt
	}
	if p.StartedAt.After(g.latest) {
		g.latest = p.StartedAt
	}
	if !p.Complete {
		g.incomplete[idx] = p.Incomplete
	}
	g.perProc[idx] = p.Acquisitions
	if f := p.Fairness; f != nil {
		g.fair[idx] = f
	} else {
		g.anyNoFair = true
	}
	g.fleet.CrossProcessChecker = g.fleet.CrossProcessChecker && p.Fleet.CrossProcessChecker
	g.fleet.SharedViolations = max(g.fleet.SharedViolations, p.Fleet.SharedViolations)
	g.fleet.Processes = append(g.fleet.Processes, p.Fleet.Processes[0])
	return nil
}

// start takes the first share's identity and the fields every share has alike.
func (g *Merger) start(p *Run) {
	ref := *p
	ref.Histograms, ref.Timeline, ref.Fairness, ref.Nodes = Histograms{}, nil, nil, nil
	ref.Fleet = &Fleet{Procs: p.Fleet.Procs, StartAt: p.Fleet.StartAt, RunID: p.Fleet.RunID,
		Processes: []ProcessResult{{Index: p.Fleet.Processes[0].Index, Version: p.Fleet.Processes[0].Version, Image: p.Fleet.Processes[0].Image}}}
	g.ref, g.refIdx = &ref, p.Fleet.Processes[0].Index
	g.m = Run{
		Driver: p.Driver, Round: p.Round, DriverSettings: maps.Clone(p.DriverSettings),
		Workload: p.Workload, Topology: p.Topology, TopologySpec: p.TopologySpec,
		Addrs: slices.Clone(p.Addrs), Keys: p.Keys, KeyDist: p.KeyDist, HoldUS: p.HoldUS,
		Seed: p.Seed, WarmupS: p.WarmupS, StartedAt: p.StartedAt, Complete: true,
		Pacing: p.Pacing, Arrival: p.Arrival, Net: p.Net,
	}
	g.latest = p.StartedAt
	g.fleet = Fleet{Procs: p.Fleet.Procs, StartAt: p.Fleet.StartAt, RunID: p.Fleet.RunID, CrossProcessChecker: true}
}

// Mismatch compares the identity of two shares of a run and returns the first field in which b
// differs from a, with both values; "" when they are shares of one run. The fields are the
// driver, its round and settings, what was run (workload, topology, workers, keys, hold, pacing,
// network: Run.Case), the seed and warm-up, the process count, common start time and run id, and
// the lockbench version and image each process ran. It is safe for concurrent use.
func Mismatch(a, b *Run) (field, va, vb string) {
	ca, cb := a.Case(), b.Case()
	pa, pb := fleetOf(a), fleetOf(b)
	checks := []struct {
		name   string
		va, vb string
	}{
		{"driver", a.Driver, b.Driver},
		{"round", fmt.Sprint(a.Round), fmt.Sprint(b.Round)},
		{"driver settings", settingsText(a.DriverSettings), settingsText(b.DriverSettings)},
		{"configuration", ca.String(), cb.String()},
		{"seed", fmt.Sprint(a.Seed), fmt.Sprint(b.Seed)},
		{"warmup_s", fmt.Sprint(a.WarmupS), fmt.Sprint(b.WarmupS)},
		{"procs", fmt.Sprint(pa.Procs), fmt.Sprint(pb.Procs)},
		{"start_at", pa.StartAt.UTC().Format(time.RFC3339Nano), pb.StartAt.UTC().Format(time.RFC3339Nano)},
		{"run_id", pa.RunID, pb.RunID},
		{"version", processOf(pa).Version, processOf(pb).Version},
		{"image", processOf(pa).Image, processOf(pb).Image},
	}
	for _, c := range checks {
		if c.va == c.vb {
			continue
		}
		if c.name == "configuration" {
			// Name the label that differs, not the whole case.
			for i := range max(len(ca), len(cb)) {
				la, lb := labelAt(ca, i), labelAt(cb, i)
				if la != lb && la.Name == lb.Name {
					return la.Name, la.Value, lb.Value
				}
			}
		}
		return c.name, c.va, c.vb
	}
	return "", "", ""
}

func labelAt(c Case, i int) Label {
	if i < len(c) {
		return c[i]
	}
	return Label{}
}

func fleetOf(r *Run) *Fleet {
	if r.Fleet == nil {
		return &Fleet{}
	}
	return r.Fleet
}

func processOf(f *Fleet) ProcessResult {
	if len(f.Processes) == 0 {
		return ProcessResult{}
	}
	return f.Processes[0]
}

func settingsText(s map[string]string) string {
	keys := slices.Sorted(maps.Keys(s))
	for i, k := range keys {
		keys[i] = k + "=" + s[k]
	}
	return "[" + strings.Join(keys, ",") + "]"
}

// addTimeline adds a share's timeline point by point into the running per-point histograms.
func (g *Merger) addTimeline(idx int, tl *Timeline) error {
	if tl == nil {
		return nil
	}
	// Decode every point first, so that a bad one leaves the totals as they were.
	hs := make([]*hdrhistogram.Histogram, len(tl.Points))
	for i, q := range tl.Points {
		h, err := decode(q.Histogram)
		if err != nil {
			return fmt.Errorf("process %d: timeline point %d: %w", idx, i, err)
		}
		hs[i] = h
	}
	g.timelines++
	if g.tl == nil {
		g.tl = &Timeline{Start: tl.Start, IntervalS: tl.IntervalS}
	}
	if tl.Start.Before(g.tl.Start) {
		g.tl.Start = tl.Start
	}
	for i, q := range tl.Points {
		if i >= len(g.tl.Points) {
			g.tl.Points = append(g.tl.Points, TimelinePoint{})
			g.tlHists = append(g.tlHists, newHistogram())
		}
		g.tlHists[i].Merge(hs[i])
		g.tl.Points[i].Errors += q.Errors
		g.tl.Points[i].DurationS = max(g.tl.Points[i].DurationS, q.DurationS)
	}
	return nil
}

// Run returns the merged run of the shares added so far. With none it returns an error
// wrapping ErrFleetMismatch.
func (g *Merger) Run() (Run, error) {
	if g.n == 0 {
		return Run{}, fmt.Errorf("%w: nothing to merge", ErrFleetMismatch)
	}
	m := g.m
	m.ErrorsByKind = maps.Clone(m.ErrorsByKind)
	m.ErrorSamples = cloneSamples(m.ErrorSamples)
	m.Checkers = slices.Clone(m.Checkers)
	if m.Referee != nil {
		ref := *m.Referee
		ref.Examples = slices.Clone(ref.Examples)
		m.Referee = &ref
		m.Violations = max(m.Violations, ref.Violations)
	}
	if m.Resource != nil {
		res := *m.Resource
		m.Resource = &res
	}
	m.RedisCommandsByName = maps.Clone(m.RedisCommandsByName)
	m.Faults = slices.Clone(m.Faults)
	slices.SortStableFunc(m.Faults, func(a, b Fault) int {
		return cmp.Or(cmp.Compare(a.AtS, b.AtS), cmp.Compare(a.Node, b.Node), cmp.Compare(a.Spec, b.Spec))
	})
	fleet := g.fleet
	fleet.Processes = slices.Clone(fleet.Processes)
	slices.SortFunc(fleet.Processes, func(a, b ProcessResult) int { return a.Index - b.Index })
	fleet.StartSkewMS = float64(g.latest.Sub(m.StartedAt)) / float64(time.Millisecond)
	fleet.Warnings = nil
	fleet.setStartSpread(m.WarmupS)
	for idx := range fleet.Procs {
		if !g.seen[idx] {
			fleet.Lost = append(fleet.Lost, idx)
		}
	}
	var incomplete []string
	for _, idx := range slices.Sorted(maps.Keys(g.incomplete)) {
		incomplete = append(incomplete, fmt.Sprintf("process %d: %s", idx, g.incomplete[idx]))
	}
	m.Complete = len(incomplete) == 0
	if len(fleet.Lost) > 0 {
		m.Complete = false
		incomplete = append(incomplete, fmt.Sprintf("no result from process %s of %d", joinInts(fleet.Lost), fleet.Procs))
	}
	m.Incomplete = strings.Join(incomplete, "; ")
	nodes := slices.Collect(maps.Values(g.nodes))
	slices.SortFunc(nodes, func(a, b *mergedNode) int {
		if a.index != b.index {
			return a.index - b.index
		}
		return a.pos - b.pos
	})
	m.Nodes = nil
	for _, n := range nodes {
		m.Nodes = append(m.Nodes, n.NodeResult)
	}
	if err := m.fillMerged(g.acq, g.rel, g.cyc); err != nil {
		return Run{}, err
	}
	if err := g.fillOpenLoop(&m); err != nil {
		return Run{}, err
	}
	m.Fleet = &fleet
	g.fillFairness(&m)
	if g.timelines == g.n && g.tl != nil {
		tl, err := g.timeline()
		if err != nil {
			return Run{}, err
		}
		m.Timeline = tl
	}
	return m, nil
}

// fillOpenLoop sets an open loop's figures: the target and achieved rates and the late and
// dropped attempts add up, as the processes ran shares of one schedule (lockbench run --procs
// gives each the rate over the processes), and the service-time histograms merge like the
// others. The merged run is saturated when any share was, or when the sum misses the summed
// target by more than SaturationTolerance. The start lags (how late free workers began the
// attempts they took on time) merge as the service times do.
func (g *Merger) fillOpenLoop(m *Run) error {
	if m.Pacing != PacingOpen {
		m.TargetRate, m.AchievedRate, m.Late, m.Dropped, m.Saturated = 0, 0, 0, 0, false
		return nil
	}
	m.Saturated = m.Saturated || m.AchievedRate < m.TargetRate*(1-SaturationTolerance)
	if g.lag != nil && g.lag.TotalCount() > 0 {
		pc := percentiles(g.lag)
		m.StartLagUS = &pc
		var err error
		if m.Histograms.StartLag, err = encode(g.lag); err != nil {
			return fmt.Errorf("encode start-lag histogram: %w", err)
		}
	}
	if g.service == nil || g.service.TotalCount() == 0 {
		return nil
	}
	pc := percentiles(g.service)
	m.ServiceLatencyUS = &pc
	var err error
	if m.Histograms.Service, err = encode(g.service); err != nil {
		return fmt.Errorf("encode service-time histogram: %w", err)
	}
	return nil
}

// fillFairness sets m's fairness from the processes' (in index order): the workers of every
// process in order, Jain's index over them and over the processes' acquisitions, the longest
// wait, the spread of per-worker p99 waits when every process kept its shares, and the FIFO
// counts added up. Runs from before fairness contribute nothing.
func (g *Merger) fillFairness(m *Run) {
	var workers, perProcess []int64
	var shares []WorkerShare
	allShares := !g.anyNoFair
	var fifo *FIFOFidelity
	longest := 0.0
	for _, idx := range slices.Sorted(maps.Keys(g.perProc)) {
		perProcess = append(perProcess, g.perProc[idx])
		f := g.fair[idx]
		if f == nil {
			continue
		}
		workers = append(workers, f.WorkerAcquisitions...)
		longest = max(longest, f.LongestWaitUS)
		if len(f.PerWorker) == len(f.WorkerAcquisitions) {
			shares = append(shares, f.PerWorker...)
		} else {
			allShares = false
		}
		if f.FIFO != nil {
			if fifo == nil {
				fifo = &FIFOFidelity{}
			}
			fifo.QueuedGrants += f.FIFO.QueuedGrants
			fifo.InOrder += f.FIFO.InOrder
		}
	}
	m.Fairness = nil
	m.SetWorkerFairness(workers)
	if allShares {
		m.Fairness.setShares(shares)
	}
	m.Fairness.LongestWaitUS = max(m.Fairness.LongestWaitUS, longest)
	if fifo != nil {
		m.Fairness.FIFO = NewFIFOFidelity(fifo.QueuedGrants, fifo.InOrder)
	}
	m.Fairness.JainProcesses = Jain(perProcess)
}

// timeline returns the merged timeline: the points start at the earliest start, one after
// another; a point lasts as long as the longest of its parts.
func (g *Merger) timeline() (*Timeline, error) {
	out := &Timeline{Start: g.tl.Start, IntervalS: g.tl.IntervalS, Points: make([]TimelinePoint, 0, len(g.tl.Points))}
	start := 0.0
	for i, q := range g.tl.Points {
		h := g.tlHists[i]
		p := TimelinePoint{StartS: start, DurationS: q.DurationS, Errors: q.Errors}
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
