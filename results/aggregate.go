package results

import (
	"slices"
)

// Group is the repetitions of one driver on one case (see Run.Case): the
// same workload, topology, concurrency, keys, key distribution, hold time and
// whatever else Case covers. Its figures are medians over the runs that
// measured something, because a median of a few interleaved repetitions
// shrugs off the one run a noisy neighbour slowed down, where a mean would
// not; counts (acquisitions, errors, violations, commands) are sums, and
// the most concurrent readers is the maximum. Every measured field of Run is
// aggregated here, so a report of repeated runs loses nothing a single run
// shows. It is a plain value; it is not safe for concurrent modification.
type Group struct {
	// Runs are the repetitions, in the order they were given.
	Runs []Run
	// Measured counts the runs with at least one acquisition; the medians
	// and the range are over these.
	Measured int

	// Medians over the measured runs. Commands and CPU per acquisition are
	// over the runs that measured them (non-zero), and 0 when none did.
	ThroughputPerS            float64
	AcquireP50US              float64
	AcquireP99US              float64
	AcquireP999US             float64
	CommandsPerAcquisition    float64
	ClientCPUPerAcquisitionUS float64
	ServerCPUPerAcquisitionUS float64
	// AdapterCPUPerAcquisitionUS is the part of ClientCPUPerAcquisitionUS an external
	// driver's adapter spent (Run.AdapterCPUUS); 0 for built-in drivers.
	AdapterCPUPerAcquisitionUS float64
	// ProjectedPerS and RedisBusy are the medians of the runs' Capacity (projected
	// server-bound acq/s, the busiest master's utilization) over the runs that have one; 0 when
	// none does.
	ProjectedPerS, RedisBusy float64
	// FailedAttemptsPerAcquisition and LocalHandoffsPerAcquisition are medians over the runs
	// with DriverCounts; Counted says how many had them (0: the driver keeps none).
	FailedAttemptsPerAcquisition, LocalHandoffsPerAcquisition float64
	Counted                                                   int
	// AcquireLatencyUS, ReleaseLatencyUS and CycleLatencyUS are the medians of
	// each percentile (and of the mean and max) over the measured runs; the
	// Acquire…US fields above repeat three of them.
	AcquireLatencyUS, ReleaseLatencyUS, CycleLatencyUS Percentiles
	// MinThroughputPerS and MaxThroughputPerS are the range of acq/s.
	MinThroughputPerS, MaxThroughputPerS float64

	// Sums over all runs.
	Acquisitions, Errors, Violations int64
	// FencingViolations is the part of Violations that were fencing tokens out of grant order.
	FencingViolations int64
	// ErrorsByKind adds up the runs' errors by kind; nil when there were none.
	ErrorsByKind map[string]int64
	// RedisCommands and RedisCommandsByName add up the measured phases' commands.
	RedisCommands       int64
	RedisCommandsByName map[string]int64
	// DurationS, ClientCPUUS and ServerCPUUS add up the measured phases.
	DurationS, ClientCPUUS, ServerCPUUS float64
	// MaxConcurrentReaders is the most read holds any run saw on one key at once.
	MaxConcurrentReaders int64
	// Incomplete counts the runs that did not finish.
	Incomplete int
}

// Driver returns the driver of the group's runs.
func (g *Group) Driver() string { return g.Runs[0].Driver }

// Case returns the case of the group's runs.
func (g *Group) Case() Case { return g.Runs[0].Case() }

// topologyLabel is the topology as the user named it when known ("masters:5"), else its kind.
func topologyLabel(r *Run) string {
	if r.TopologySpec != "" {
		return r.TopologySpec
	}
	return r.Topology
}

// GroupRuns groups runs into repetitions of one driver on one case, in the
// order each group first appears, and computes each group's medians. It is
// safe for concurrent use.
func GroupRuns(runs []Run) []Group { return GroupRunsIgnoring(runs, nil) }

func (g *Group) summarize() {
	var tput, cmds, ccpu, acpu, scpu, failed, handoffs, proj, busy []float64
	var acq, rel, cyc percentileSamples
	for _, r := range g.Runs {
		g.Acquisitions += r.Acquisitions
		g.Errors += r.Errors
		g.Violations += r.Violations
		g.FencingViolations += r.FencingViolations
		g.MaxConcurrentReaders = max(g.MaxConcurrentReaders, r.MaxConcurrentReaders)
		g.ErrorsByKind = addCounts(g.ErrorsByKind, r.ErrorsByKind)
		g.RedisCommands += r.RedisCommands
		g.RedisCommandsByName = addCounts(g.RedisCommandsByName, r.RedisCommandsByName)
		g.DurationS += r.DurationS
		g.ClientCPUUS += r.ClientCPUUS
		g.ServerCPUUS += r.ServerCPUUS
		if !r.Complete {
			g.Incomplete++
		}
		if r.Acquisitions <= 0 {
			continue
		}
		g.Measured++
		tput = append(tput, r.ThroughputPerS)
		acq.add(r.AcquireLatencyUS)
		rel.add(r.ReleaseLatencyUS)
		cyc.add(r.CycleLatencyUS)
		cmds = appendPositive(cmds, r.RedisCommandsPerAcquisition)
		ccpu = appendPositive(ccpu, r.ClientCPUPerAcquisitionUS)
		acpu = appendPositive(acpu, r.AdapterCPUPerAcquisitionUS)
		scpu = appendPositive(scpu, r.ServerCPUPerAcquisitionUS)
		if c := r.Capacity; c != nil {
			proj, busy = append(proj, c.ProjectedPerS), append(busy, c.Utilization)
		}
		if d := r.DriverCounts; d != nil {
			failed = append(failed, d.FailedAttemptsPerAcquisition)
			handoffs = append(handoffs, d.LocalHandoffsPerAcquisition)
		}
	}
	g.Counted = len(failed)
	g.FailedAttemptsPerAcquisition, g.LocalHandoffsPerAcquisition = Median(failed), Median(handoffs)
	g.ThroughputPerS = Median(tput)
	g.AcquireLatencyUS, g.ReleaseLatencyUS, g.CycleLatencyUS = acq.median(), rel.median(), cyc.median()
	g.AcquireP50US, g.AcquireP99US, g.AcquireP999US = g.AcquireLatencyUS.P50, g.AcquireLatencyUS.P99, g.AcquireLatencyUS.P999
	g.CommandsPerAcquisition = Median(cmds)
	g.ClientCPUPerAcquisitionUS, g.ServerCPUPerAcquisitionUS = Median(ccpu), Median(scpu)
	g.AdapterCPUPerAcquisitionUS = Median(acpu)
	g.ProjectedPerS, g.RedisBusy = Median(proj), Median(busy)
	if len(tput) > 0 {
		g.MinThroughputPerS, g.MaxThroughputPerS = slices.Min(tput), slices.Max(tput)
	}
}

// percentileSamples collects each field of several Percentiles.
type percentileSamples struct{ p50, p90, p99, p999, max, mean []float64 }

func (s *percentileSamples) add(p Percentiles) {
	s.p50, s.p90, s.p99 = append(s.p50, p.P50), append(s.p90, p.P90), append(s.p99, p.P99)
	s.p999, s.max, s.mean = append(s.p999, p.P999), append(s.max, p.Max), append(s.mean, p.Mean)
}

func (s *percentileSamples) median() Percentiles {
	return Percentiles{P50: Median(s.p50), P90: Median(s.p90), P99: Median(s.p99), P999: Median(s.p999), Max: Median(s.max), Mean: Median(s.mean)}
}

// addCounts adds b into a, allocating a only when b has something.
func addCounts(a, b map[string]int64) map[string]int64 {
	for k, n := range b {
		if a == nil {
			a = make(map[string]int64, len(b))
		}
		a[k] += n
	}
	return a
}

func appendPositive(xs []float64, x float64) []float64 {
	if x > 0 {
		return append(xs, x)
	}
	return xs
}

// Median returns the middle value of xs, the mean of the two middle values
// when len(xs) is even, and 0 for no values. xs is not modified. It is safe
// for concurrent use.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Ratio compares one group with the baseline group of its case. It is a
// plain value and safe for concurrent use.
type Ratio struct {
	Group, Base *Group
	// Throughput is the group's median acq/s over the baseline's.
	Throughput float64
	// P99 is the group's median acquire p99 over the baseline's; 0 when
	// either is unmeasured.
	P99 float64
	// Paired counts the rounds both groups measured; RoundMin and RoundMax
	// are the range of the per-round throughput ratios over them. Drivers
	// of one round ran back to back, so a per-round ratio cancels drift
	// that the medians still carry.
	Paired             int
	RoundMin, RoundMax float64
}

// Ratios compares every measured group with the group of driver baseline
// on the same case, or, when the baseline did not measure that case, with
// the first measured group of the case. An empty baseline means the driver
// of the first group. Groups are taken by reference: the Ratios point into
// groups. It is safe for concurrent use with distinct groups.
func Ratios(groups []Group, baseline string) []Ratio {
	if baseline == "" && len(groups) > 0 {
		baseline = groups[0].Driver()
	}
	base := make(map[string]*Group)
	for i := range groups {
		g := &groups[i]
		if g.ThroughputPerS <= 0 {
			continue
		}
		k := g.Case().String()
		if b, ok := base[k]; !ok || (g.Driver() == baseline && b.Driver() != baseline) {
			base[k] = g
		}
	}
	var out []Ratio
	for i := range groups {
		g := &groups[i]
		b := base[g.Case().String()]
		if b == nil || b == g || g.ThroughputPerS <= 0 {
			continue
		}
		r := Ratio{Group: g, Base: b, Throughput: g.ThroughputPerS / b.ThroughputPerS}
		if g.AcquireP99US > 0 && b.AcquireP99US > 0 {
			r.P99 = g.AcquireP99US / b.AcquireP99US
		}
		r.pairRounds()
		out = append(out, r)
	}
	return out
}

func (r *Ratio) pairRounds() {
	base := make(map[int]float64)
	for _, b := range r.Base.Runs {
		if b.Round > 0 && b.ThroughputPerS > 0 {
			base[b.Round] = b.ThroughputPerS
		}
	}
	for _, g := range r.Group.Runs {
		bt, ok := base[g.Round]
		if !ok || g.Round <= 0 || g.ThroughputPerS <= 0 {
			continue
		}
		x := g.ThroughputPerS / bt
		if r.Paired == 0 || x < r.RoundMin {
			r.RoundMin = x
		}
		if r.Paired == 0 || x > r.RoundMax {
			r.RoundMax = x
		}
		r.Paired++
	}
}
