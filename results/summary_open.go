package results

import (
	"bytes"
	"fmt"
	"strconv"
	"text/tabwriter"
)

// writeOpenLoop adds a table of the open-loop runs, one row per run: the schedule asked for and
// what it got. Closed-loop runs add nothing, so their summaries read as before open loops.
func writeOpenLoop(buf *bytes.Buffer, runs []Run) {
	// Rounds tell runs of one driver apart only when there were several.
	repeated := false
	for i := range runs {
		repeated = repeated || runs[i].Round > 1
	}
	var tw *tabwriter.Writer
	for i := range runs {
		r := &runs[i]
		if r.Pacing != PacingOpen {
			continue
		}
		if tw == nil {
			buf.WriteString("\nopen loop (acq latencies from each attempt's intended start, service from its actual start, start lag: how late on-time attempts started):\n")
			tw = tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "driver\tarrival\ttarget/s\tachieved/s\tlate\tdropped\tacq p50\tacq p99\tservice p50\tservice p99\tstart lag p50\tstart lag p99")
		}
		name := r.Driver
		if repeated {
			name += " #" + strconv.Itoa(r.Round)
		}
		var service Percentiles
		if r.ServiceLatencyUS != nil {
			service = *r.ServiceLatencyUS
		}
		// The start lag is the generator's own delay (attempts taken on time); "-" in files
		// from before it.
		lag50, lag99 := "-", "-"
		if l := r.StartLagUS; l != nil {
			lag50, lag99 = latency(l.P50), latency(l.P99)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s", name, r.Arrival, rate(r.TargetRate), rate(r.AchievedRate),
			r.Late, r.Dropped, latency(r.AcquireLatencyUS.P50), latency(r.AcquireLatencyUS.P99), latency(service.P50), latency(service.P99), lag50, lag99)
		// A trailing cell, like INCOMPLETE in the main table: a saturated run's p99 is not the
		// latency at the target rate, and must not read as one.
		if r.Saturated {
			fmt.Fprint(tw, "\tSATURATED (achieved < target, or late/dropped > 0)")
		}
		fmt.Fprintln(tw)
	}
	if tw != nil {
		tw.Flush() // cannot fail: it writes to a bytes.Buffer
	}
}
