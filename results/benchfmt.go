package results

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// WriteBenchfmt writes one line per run in the Go benchmark format, so that
// golang.org/x/perf/cmd/benchstat can compare result sets:
//
//	BenchmarkLock/workload=contention/driver=lockcore/topology=single/conc=64/keys=10000/key_dist=uniform/hold_us=0 	<acquisitions>	<elapsed/acquisitions> ns/op	<n> acq/s	<n> p50-us	<n> p99-us	<n> cmds/acq	<n> violations	<n> client-us/acq	<n> redis-us/acq
//
// The name carries every case field (see benchName). The latency percentiles are those of acquire; the two CPU figures appear
// only when measured, and "<n> max-readers" (MaxConcurrentReaders) only for
// runs that took read holds (the rw workload). Repetitions of a driver (--repeat) give lines with the
// same name, which benchstat reads as samples of one benchmark. Runs with no
// acquisitions are written as a "# " comment instead, because benchstat
// rejects N=0. It is safe for concurrent use with distinct writers.
func WriteBenchfmt(w io.Writer, runs []Run) error {
	var buf bytes.Buffer
	for _, r := range runs {
		name := benchName(&r)
		if r.Acquisitions <= 0 {
			fmt.Fprintf(&buf, "# %s skipped: no acquisitions", name)
			if r.Incomplete != "" {
				fmt.Fprintf(&buf, " (%s)", r.Incomplete)
			}
			buf.WriteString("\n")
			continue
		}
		nsPerOp := r.DurationS * 1e9 / float64(r.Acquisitions)
		fmt.Fprintf(&buf, "%s \t%d\t%.1f ns/op\t%.1f acq/s\t%s p50-us\t%s p99-us\t%.3f cmds/acq\t%d violations",
			name, r.Acquisitions, nsPerOp, r.ThroughputPerS,
			strconv.FormatFloat(r.AcquireLatencyUS.P50, 'f', -1, 64),
			strconv.FormatFloat(r.AcquireLatencyUS.P99, 'f', -1, 64),
			r.RedisCommandsPerAcquisition, r.Violations)
		if r.ClientCPUPerAcquisitionUS > 0 {
			fmt.Fprintf(&buf, "\t%.3f client-us/acq", r.ClientCPUPerAcquisitionUS)
		}
		if r.ServerCPUPerAcquisitionUS > 0 {
			fmt.Fprintf(&buf, "\t%.3f redis-us/acq", r.ServerCPUPerAcquisitionUS)
		}
		if r.MaxConcurrentReaders > 0 {
			fmt.Fprintf(&buf, "\t%d max-readers", r.MaxConcurrentReaders)
		}
		buf.WriteString("\n")
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// benchName is the run's benchmark name: workload, driver, topology, conc and keys as they
// always were, then every other case field (key_dist, hold_us, and arrival, target_rate and
// net where set), so that benchstat takes two lines for one benchmark exactly when compare
// takes them for repetitions of one driver on one case: a sweep's steps differ in target_rate.
func benchName(r *Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "BenchmarkLock/workload=%s/driver=%s/topology=%s/conc=%d/keys=%d",
		benchValue(r.Workload), benchValue(r.Driver), benchValue(topologyLabel(r)), r.Concurrency, r.Keys)
	for _, l := range r.Case() {
		switch l.Name {
		case "workload", "topology", "concurrency", "keys":
			continue
		}
		fmt.Fprintf(&b, "/%s=%s", l.Name, benchValue(l.Value))
	}
	return b.String()
}

// benchValue makes s usable as a key=value part of a benchmark name: a space
// would end the name and a slash would start a new part.
func benchValue(s string) string {
	if s == "" {
		return "none"
	}
	return strings.Map(func(r rune) rune {
		if r == '/' || unicode.IsSpace(r) {
			return '_'
		}
		return r
	}, s)
}
