package results

import (
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteFairness writes, for people, one row per run with its fairness (Jain's index over the
// workers, and over the processes for runs of several; the fewest and most grants per worker,
// starved workers, the longest wait, the spread of per-worker p99 waits, FIFO fidelity) and,
// for runs that checked their holds, the hold checks (count mismatches, leases lost, renewals
// per acquisition). Then, for each run of several generator processes, each process's share:
// acquisitions, errors, violations and acquire p99, the processes lost, and whether the safety
// checker spanned the processes. Runs without fairness (older files) are left out; it writes
// nothing when none has it. It is safe for concurrent use with distinct writers.
func WriteFairness(w io.Writer, runs []Run) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	rows, holds := 0, false
	for i := range runs {
		holds = holds || runs[i].Holds != nil
	}
	for i := range runs {
		r := &runs[i]
		f := r.Fairness
		if f == nil {
			continue
		}
		if rows == 0 {
			fmt.Fprintln(tw, "\nfairness (Jain's index: 1 = every one served alike, 1/n = one served alone)")
			fmt.Fprint(tw, "workload\tdriver\tround\tworkers\tjain/workers\tprocesses\tjain/processes\tacq/worker min-max\tstarved\tlongest wait\tworker p99 wait min-median-max\tfifo")
			if holds {
				fmt.Fprint(tw, "\thold checks\tcount mismatches\tleases lost\trenewals/acq")
			}
			fmt.Fprintln(tw)
		}
		rows++
		procs, jp := "1", "-"
		if fl := r.Fleet; fl != nil && len(fl.Processes) > 0 {
			procs = fmt.Sprintf("%d/%d", len(fl.Processes), fl.Procs)
			jp = fmt.Sprintf("%.4f", f.JainProcesses)
		}
		fifo := "-"
		if f.FIFO != nil && f.FIFO.QueuedGrants > 0 {
			fifo = fmt.Sprintf("%.3f of %d queued", f.FIFO.Fidelity, f.FIFO.QueuedGrants)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.4f\t%s\t%s\t%d-%d\t%d\t%s\t%s-%s-%s\t%s", r.Workload, r.Driver, max(r.Round, 1), f.Workers, f.JainWorkers, procs, jp,
			f.MinAcquisitions, f.MaxAcquisitions, f.StarvedWorkers, latency(f.LongestWaitUS), latency(f.WaitP99MinUS), latency(f.WaitP99MedianUS), latency(f.WaitP99MaxUS), fifo)
		if h := r.Holds; h != nil {
			renewals := "-"
			if h.RenewalsCounted {
				renewals = perAcq(h.RenewalsPerAcquisition)
			}
			checks := fmt.Sprint(h.Checks)
			if h.Unchecked != "" {
				checks = "none (driver cannot read its count)"
			}
			fmt.Fprintf(tw, "\t%s\t%d\t%d\t%s", checks, h.CountMismatches, h.LeasesLost, renewals)
		}
		fmt.Fprintln(tw)
	}
	if rows == 0 {
		return nil
	}
	tw.Flush() // cannot fail: it writes to a bytes.Buffer
	for i := range runs {
		if err := writeProcesses(&buf, &runs[i]); err != nil {
			return err
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeProcesses writes one run's processes, if it had several.
func writeProcesses(w io.Writer, r *Run) error {
	f := r.Fleet
	if f == nil || f.Procs < 2 {
		return nil
	}
	checker := "shared by the processes (one machine)"
	if !f.CrossProcessChecker {
		checker = "per process only"
	}
	fmt.Fprintf(w, "\n%s round %d: %d processes, started within %.1fms, merged %d acquisitions, acquire max %.0fus; safety checker %s, %d violations (shared memory counted %d)\n",
		r.Driver, max(r.Round, 1), f.Procs, f.StartSkewMS, r.Acquisitions, r.AcquireLatencyUS.Max, checker, r.Violations, f.SharedViolations)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "process\tworkers\tacquisitions\tacq/s\terrors\tviolations\tp99 us\tmax us\tjain/workers\t")
	for _, p := range f.Processes {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.0f\t%d\t%d\t%.0f\t%.0f\t%.4f\t\n", p.Index, p.Concurrency, p.Acquisitions, p.ThroughputPerS,
			p.Errors, p.Violations, p.AcquireLatencyUS.P99, p.AcquireLatencyUS.Max, p.JainWorkers)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(f.Lost) > 0 {
		fmt.Fprintf(w, "LOST: no result from process %s: %s\n", joinInts(f.Lost), r.Incomplete)
	}
	return nil
}
