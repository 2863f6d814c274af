package results

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteSummary writes a plain-text table for people, one row per run, with
// latencies in human units and an INCOMPLETE marker on runs that did not
// finish. When runs share a workload, it then prints each run's throughput
// and acquire p99 as a ratio to the first run of that workload. It is safe
// for concurrent use with distinct writers.
func WriteSummary(w io.Writer, runs []Run) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tdriver\ttopology\tconc\tkeys\tacquisitions\tacq/s\tacq p50\tacq p99\tacq p999\tacq max\tcycle p99\tcmds/acq\terrors\tviolations")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%d\t%d",
			r.Workload, r.Driver, r.Topology, r.Concurrency, r.Keys, r.Acquisitions, rate(r.ThroughputPerS),
			latency(r.AcquireLatencyUS.P50), latency(r.AcquireLatencyUS.P99),
			latency(r.AcquireLatencyUS.P999), latency(r.AcquireLatencyUS.Max),
			latency(r.CycleLatencyUS.P99), r.RedisCommandsPerAcquisition, r.Errors, r.Violations)
		// The marker is a trailing cell, so complete rows carry no padding.
		if !r.Complete {
			fmt.Fprint(tw, "\tINCOMPLETE")
			if r.Incomplete != "" {
				fmt.Fprintf(tw, " (%s)", r.Incomplete)
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush() // cannot fail: it writes to a bytes.Buffer
	writeRatios(&buf, runs)
	_, err := w.Write(buf.Bytes())
	return err
}

// writeRatios compares each run with the first run of the same workload,
// because only runs of one workload measure the same thing. Runs that
// measured nothing are left out.
func writeRatios(buf *bytes.Buffer, runs []Run) {
	first := make(map[string]int)      // workload -> index of its first measured run
	drivers := make(map[[2]string]int) // workload, driver -> runs
	for i, r := range runs {
		if r.ThroughputPerS <= 0 {
			continue
		}
		if _, ok := first[r.Workload]; !ok {
			first[r.Workload] = i
		}
		drivers[[2]string{r.Workload, r.Driver}]++
	}
	// The driver names a run unless the workload has several runs of it.
	label := func(r Run) string {
		if drivers[[2]string{r.Workload, r.Driver}] == 1 {
			return r.Driver
		}
		return fmt.Sprintf("%s (%s, conc %d)", r.Driver, r.Topology, r.Concurrency)
	}
	sep := "\n"
	for i, r := range runs {
		b, ok := first[r.Workload]
		if !ok || b == i || r.ThroughputPerS <= 0 {
			continue
		}
		base := runs[b]
		fmt.Fprintf(buf, "%s%s: %.2fx %s throughput", sep, label(r), r.ThroughputPerS/base.ThroughputPerS, label(base))
		if base.AcquireLatencyUS.P99 > 0 && r.AcquireLatencyUS.P99 > 0 {
			fmt.Fprintf(buf, ", p99 %.2fx", r.AcquireLatencyUS.P99/base.AcquireLatencyUS.P99)
		}
		buf.WriteString("\n")
		sep = ""
	}
}

// latency formats microseconds with about three significant digits, e.g.
// "412µs", "1.27ms", "2.0s"; "-" means nothing was measured.
func latency(us float64) string {
	switch {
	case us <= 0:
		return "-"
	case us < 999.5:
		return strconv.FormatFloat(us, 'f', 0, 64) + "µs"
	case us < 9_995:
		return strconv.FormatFloat(us/1e3, 'f', 2, 64) + "ms"
	case us < 99_950:
		return strconv.FormatFloat(us/1e3, 'f', 1, 64) + "ms"
	case us < 999_500:
		return strconv.FormatFloat(us/1e3, 'f', 0, 64) + "ms"
	}
	return strconv.FormatFloat(us/1e6, 'f', 1, 64) + "s"
}

func rate(perS float64) string {
	if perS < 100 {
		return strconv.FormatFloat(perS, 'f', 1, 64)
	}
	return strconv.FormatFloat(perS, 'f', 0, 64)
}
