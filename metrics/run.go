package metrics

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lockbench/lockbench/workloads"
	"github.com/prometheus/client_golang/prometheus"
)

// Labels tell one run's series from another's. It is a plain value and safe for concurrent use.
type Labels struct {
	// RunID is the invocation's, shared by every generator process of one run.
	RunID, Driver, Workload, Topology string
	// Round is the 1-based --repeat round; Step a sweep's 1-based step (0: not a sweep);
	// Generator the process index of a run made by several (0 otherwise).
	Round, Step, Generator int
}

var labelNames = []string{"run_id", "driver", "workload", "topology", "round", "step", "generator"}

func (l Labels) values() []string {
	step := ""
	if l.Step > 0 {
		step = strconv.Itoa(l.Step)
	}
	return []string{l.RunID, l.Driver, l.Workload, l.Topology, strconv.Itoa(l.Round), step, strconv.Itoa(l.Generator)}
}

// Buckets are the upper bounds, in seconds, of both latency histograms: from 50µs to 10s
// (54 bounds), three per doubling (each bound 2^(1/3) ≈ 1.26 times the last, rounded to 2 significant
// digits), so histogram_quantile, which interpolates linearly inside a bucket, is never
// off by more than the bucket it lands in: at most 26% of the value, typically far less.
var Buckets = func() []float64 {
	var b []float64
	for v := 50e-6; v <= 10.0001; v *= math.Cbrt(2) {
		r := roundSig(v, 2)
		if len(b) == 0 || r > b[len(b)-1] {
			b = append(b, r)
		}
	}
	return append(b, 10)
}()

func roundSig(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits)-math.Ceil(math.Log10(v)))
	return math.Round(v*p) / p
}

// Run is one run's series. Update is safe for concurrent use with the server's scrapes; a nil
// Run does nothing.
type Run struct {
	labels []string

	mu sync.Mutex
	f  figures
}

type figures struct {
	measuring                                  bool
	acquisitions, attempts, failed, violations int64
	counted                                    bool
	inFlight, late, dropped                    int64
	commands                                   int64 // -1: not measured
	errors                                     map[string]int64
	acquire, cycle                             buckets
}

// buckets is a histogram in Prometheus's shape: cumulative counts per bound of Buckets.
type buckets struct {
	counts []uint64
	count  uint64
	sum    float64 // seconds
}

func newRun(l Labels) *Run {
	r := &Run{labels: l.values()}
	r.f.commands = -1
	r.f.errors = map[string]int64{}
	r.f.acquire.counts = make([]uint64, len(Buckets))
	r.f.cycle.counts = make([]uint64, len(Buckets))
	return r
}

// Update sets the run's series from l, the measured phase so far (see workloads.Plan.Live).
func (r *Run) Update(l workloads.Live) {
	if r == nil {
		return
	}
	acquire, cycle := fromHDR(l.Acquire), fromHDR(l.Cycle)
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &r.f
	f.measuring = !l.Final
	f.acquisitions, f.violations = l.Run.Acquisitions, l.Run.Violations
	f.attempts, f.failed, f.counted = l.Attempts, l.FailedAttempts, l.Counted
	f.inFlight, f.late, f.dropped = l.InFlight, l.Late, l.Dropped
	if l.RedisCommands >= 0 {
		f.commands = l.RedisCommands
	}
	maps.Copy(f.errors, l.Run.ErrorsByKind)
	if acquire != nil {
		f.acquire = *acquire
	}
	if cycle != nil {
		f.cycle = *cycle
	}
}

// fromHDR counts h's values (microseconds) at or below each bound. A bucket of h that
// straddles a bound (h keeps 3 significant digits) counts below it if its highest equivalent
// value does: an error of at most 0.1% of the bound.
func fromHDR(h *hdrhistogram.Histogram) *buckets {
	if h == nil {
		return nil
	}
	b := &buckets{counts: make([]uint64, len(Buckets))}
	i := 0
	var cum uint64
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		for i < len(Buckets) && float64(bar.To) > Buckets[i]*1e6 {
			b.counts[i] = cum
			i++
		}
		cum += uint64(bar.Count)
	}
	for ; i < len(Buckets); i++ {
		b.counts[i] = cum
	}
	b.count = uint64(h.TotalCount())
	b.sum = h.Mean() * float64(b.count) / 1e6
	return b
}

// The descriptions of the run series.
var (
	descAcquisitions = desc("acquisitions_total", "Locks acquired and released in the measured phase.")
	descAttempts     = desc("lock_attempts_total", "Lock attempts sent to Redis, for drivers that count them.")
	descFailed       = desc("failed_attempts_total", "Lock attempts that found the lock taken, for drivers that count them.")
	descErrors       = prometheus.NewDesc("lockbench_errors_total", "Failed operations, by kind.", append(slices.Clone(labelNames), "kind"), nil)
	descViolations   = desc("violations_total", "Safety violations the checker saw (two holders at once, fencing tokens out of order), warm-up included.")
	descAcquire      = desc("acquire_wait_seconds", "Time to acquire a lock (open loop: from the attempt's intended start).")
	descCycle        = desc("cycle_seconds", "Time from the start of an acquire to the end of its release, the hold included.")
	descInFlight     = desc("attempts_in_flight", "Lock cycles begun and not finished.")
	descLate         = desc("open_loop_late_total", "Open-loop slots started after their intended start because every worker was busy.")
	descDropped      = desc("open_loop_dropped_total", "Open-loop slots no worker was free to start before the phase ended (known when the run ends).")
	descCommands     = desc("redis_commands_total", "Commands the Redis servers ran during the measured phase (INFO commandstats, lockbench's own INFO left out).")
	descCmdsPerAcq   = desc("redis_commands_per_acquisition", "Redis commands per acquisition over the measured phase so far.")
	descMeasuring    = desc("measuring", "1 while the run's measured phase runs, 0 before its first figures and after its end.")
)

func desc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("lockbench_"+name, help, labelNames, nil)
}

// collector exports every registered run.
type collector struct {
	mu   sync.Mutex
	runs []*Run
}

func (c *collector) add(r *Run) {
	c.mu.Lock()
	c.runs = append(c.runs, r)
	c.mu.Unlock()
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descAcquisitions, descAttempts, descFailed, descErrors, descViolations, descAcquire,
		descCycle, descInFlight, descLate, descDropped, descCommands, descCmdsPerAcq, descMeasuring} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	runs := slices.Clone(c.runs)
	c.mu.Unlock()
	for _, r := range runs {
		r.collect(ch)
	}
}

func (r *Run) collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, lv := &r.f, r.labels
	counter := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lv...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	counter(descAcquisitions, f.acquisitions)
	if f.counted {
		counter(descAttempts, f.attempts)
		counter(descFailed, f.failed)
	}
	for _, kind := range slices.Sorted(maps.Keys(f.errors)) {
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(f.errors[kind]), append(slices.Clone(lv), kind)...)
	}
	counter(descViolations, f.violations)
	for _, h := range []struct {
		d *prometheus.Desc
		b *buckets
	}{{descAcquire, &f.acquire}, {descCycle, &f.cycle}} {
		bk := make(map[float64]uint64, len(Buckets))
		for i, le := range Buckets {
			bk[le] = h.b.counts[i]
		}
		ch <- prometheus.MustNewConstHistogram(h.d, h.b.count, h.b.sum, bk, lv...)
	}
	gauge(descInFlight, float64(f.inFlight))
	counter(descLate, f.late)
	counter(descDropped, f.dropped)
	if f.commands >= 0 {
		counter(descCommands, f.commands)
		if f.acquisitions > 0 {
			gauge(descCmdsPerAcq, float64(f.commands)/float64(f.acquisitions))
		}
	}
	m := 0.0
	if f.measuring {
		m = 1
	}
	gauge(descMeasuring, m)
}
