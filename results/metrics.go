package results

import (
	"strconv"
	"strings"
)

// Metric is one figure of a run that gates, thresholds and comparisons look
// at, with how to read it from a Run and which way is better. It is a plain
// value and safe for concurrent use.
type Metric struct {
	// Name is what users write: "throughput", "p99", "errors", …
	Name string
	// Unit is the unit of Value: "acq/s", "µs", "cmds/acq", "µs/acq" or "" for counts.
	Unit string
	// Label is a short column label for reports, e.g. "acq p99".
	Label string
	// HigherIsBetter is true for throughput; for latencies, costs and counts lower is better.
	HigherIsBetter bool
	// Latency is true when Value is a duration in microseconds, so users give it with a unit
	// ("5ms").
	Latency bool
	// Count is true for totals over a run (errors, violations): over several rounds they add
	// up instead of giving a median, and a run with no acquisitions still has them.
	Count bool
	// Value reads the metric from a run; ok is false when the run did not measure it (no
	// acquisitions, or CPU and commands not measured).
	Value func(r *Run) (v float64, ok bool)
}

// Metrics lists every metric, in report order. Names are unique.
var Metrics = []Metric{
	{Name: "throughput", Unit: "acq/s", Label: "acq/s", HigherIsBetter: true, Value: measured(func(r *Run) float64 { return r.ThroughputPerS })},
	{Name: "p50", Unit: "µs", Label: "acq p50", Latency: true, Value: measured(func(r *Run) float64 { return r.AcquireLatencyUS.P50 })},
	{Name: "p90", Unit: "µs", Label: "acq p90", Latency: true, Value: measured(func(r *Run) float64 { return r.AcquireLatencyUS.P90 })},
	{Name: "p99", Unit: "µs", Label: "acq p99", Latency: true, Value: measured(func(r *Run) float64 { return r.AcquireLatencyUS.P99 })},
	{Name: "p999", Unit: "µs", Label: "acq p999", Latency: true, Value: measured(func(r *Run) float64 { return r.AcquireLatencyUS.P999 })},
	{Name: "max", Unit: "µs", Label: "acq max", Latency: true, Value: measured(func(r *Run) float64 { return r.AcquireLatencyUS.Max })},
	{Name: "mean", Unit: "µs", Label: "acq mean", Latency: true, Value: measured(func(r *Run) float64 { return r.AcquireLatencyUS.Mean })},
	{Name: "release-p99", Unit: "µs", Label: "release p99", Latency: true, Value: measured(func(r *Run) float64 { return r.ReleaseLatencyUS.P99 })},
	{Name: "cycle-p99", Unit: "µs", Label: "cycle p99", Latency: true, Value: measured(func(r *Run) float64 { return r.CycleLatencyUS.P99 })},
	{Name: "cmds", Unit: "cmds/acq", Label: "cmds/acq", Value: positive(func(r *Run) float64 { return r.RedisCommandsPerAcquisition })},
	{Name: "client-cpu", Unit: "µs/acq", Label: "client cpu/acq", Value: positive(func(r *Run) float64 { return r.ClientCPUPerAcquisitionUS })},
	{Name: "redis-cpu", Unit: "µs/acq", Label: "redis cpu/acq", Value: positive(func(r *Run) float64 { return r.ServerCPUPerAcquisitionUS })},
	{Name: "failed-attempts", Unit: "attempts/acq", Label: "failed/acq", Value: driverCounted(func(d *DriverCounts) float64 { return d.FailedAttemptsPerAcquisition })},
	{Name: "handoffs", Unit: "handoffs/acq", Label: "handoffs/acq", HigherIsBetter: true, Value: driverCounted(func(d *DriverCounts) float64 { return d.LocalHandoffsPerAcquisition })},
	{Name: "subscribes", Unit: "subs/acq", Label: "subs/acq", Value: waitCounted(func(w *WaitCounts) float64 { return w.SubscribesPerAcquisition })},
	{Name: "subscribe-timeouts", Label: "subscribe timeouts", Count: true, Value: waitCounted(func(w *WaitCounts) float64 { return float64(w.SubscribeTimeouts) })},
	{Name: "missed-wakeups", Label: "missed wake-ups", Count: true, Value: waitCounted(func(w *WaitCounts) float64 { return float64(w.EndedWithoutWake) })},
	{Name: "errors", Label: "errors", Count: true, Value: always(func(r *Run) float64 { return float64(r.Errors) })},
	{Name: "violations", Label: "violations", Count: true, Value: always(func(r *Run) float64 { return float64(r.Violations) })},
	{Name: "fencing-violations", Label: "fencing violations", Count: true, Value: always(func(r *Run) float64 { return float64(r.FencingViolations) })},
	{Name: "corrupt-writes", Label: "corrupt writes", Count: true, Value: resourceCounted(func(r *Resource) float64 { return float64(r.CorruptWrites) })},
	{Name: "stale-rejected", Label: "stale rejected", Count: true, Value: resourceCounted(func(r *Resource) float64 { return float64(r.StaleRejected) })},
	{Name: "acquisitions", Label: "acquisitions", Count: true, HigherIsBetter: true, Value: always(func(r *Run) float64 { return float64(r.Acquisitions) })},
}

// LookupMetric returns the metric called name; "acq/s" and "tput" are also
// accepted for throughput. It is safe for concurrent use.
func LookupMetric(name string) (Metric, bool) {
	switch name {
	case "acq/s", "tput":
		name = "throughput"
	}
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricNames lists the metric names, comma separated, for messages.
func MetricNames() string {
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// measured reads a figure that exists only when the run acquired something.
func measured(f func(*Run) float64) func(*Run) (float64, bool) {
	return func(r *Run) (float64, bool) { return f(r), r.Acquisitions > 0 }
}

// positive reads a figure whose 0 means "not measured" (commands, CPU).
func positive(f func(*Run) float64) func(*Run) (float64, bool) {
	return func(r *Run) (float64, bool) {
		v := f(r)
		return v, r.Acquisitions > 0 && v > 0
	}
}

// driverCounted reads a figure from the driver's own counts, which only some drivers keep.
func driverCounted(f func(*DriverCounts) float64) func(*Run) (float64, bool) {
	return func(r *Run) (float64, bool) {
		if r.DriverCounts == nil || r.Acquisitions == 0 {
			return 0, false
		}
		return f(r.DriverCounts), true
	}
}

// waitCounted reads a figure of the driver's pub/sub waiting, which only drivers that wait on
// pub/sub count (see WaitCounts).
func waitCounted(f func(*WaitCounts) float64) func(*Run) (float64, bool) {
	return func(r *Run) (float64, bool) {
		if r.Waiting == nil {
			return 0, false
		}
		return f(r.Waiting), true
	}
}

// resourceCounted reads a figure of the protected resource, which only runs with one have (see
// Resource).
func resourceCounted(f func(*Resource) float64) func(*Run) (float64, bool) {
	return func(r *Run) (float64, bool) {
		if r.Resource == nil {
			return 0, false
		}
		return f(r.Resource), true
	}
}

func always(f func(*Run) float64) func(*Run) (float64, bool) {
	return func(r *Run) (float64, bool) { return f(r), true }
}

// Values returns m's value for every run of g that measured it, in run
// order. It is safe for concurrent use.
func (g *Group) Values(m Metric) []float64 {
	var out []float64
	for i := range g.Runs {
		if v, ok := m.Value(&g.Runs[i]); ok {
			out = append(out, v)
		}
	}
	return out
}

// Value returns m aggregated over g's rounds: the sum for counts, else the
// median over the runs that measured it; ok is false when none did. It is
// safe for concurrent use.
func (g *Group) Value(m Metric) (v float64, ok bool) {
	xs := g.Values(m)
	if len(xs) == 0 {
		return 0, false
	}
	if m.Count {
		for _, x := range xs {
			v += x
		}
		return v, true
	}
	return Median(xs), true
}

// Format renders v, a value of m, for people, in the summary's style:
// latencies "412µs", "1.27ms"; throughput "88492"; commands "9.02"; CPU per
// acquisition "8.9µs"; counts as integers. It is safe for concurrent use.
func (m Metric) Format(v float64) string {
	switch {
	case m.Latency:
		return latency(v)
	case m.Count:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case m.Unit == "acq/s":
		return rate(v)
	case m.Unit == "µs/acq":
		return cpuTime(v)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
