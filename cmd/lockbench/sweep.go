package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/progress"
	"github.com/lockbench/lockbench/sweep"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/lockbench/lockbench/workloads"
)

// sweepCommand is lockbench sweep: the flags become sweep.Options, each step a run of one bench
// session, and the outcome a result file, a summary and an exit code (see sweepExamples).
func sweepCommand(args []string, stdout, stderr io.Writer) int {
	f, s, code, ok := parseSweepFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	opts := s.Options(f.sweepRun())
	if s.DryRun {
		if err := sweep.WritePlan(stdout, opts, f.cfg.Warmup); err != nil {
			fmt.Fprintf(stderr, "lockbench sweep: plan: %v\n", err)
		}
		return exitOK
	}
	ui := progress.New(stderr)
	stopProfiles, ok := profile("sweep", f, stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfiles()
	served, err := bench.ServeMetrics(f.metrics.Spec(1), ui)
	if err != nil {
		fmt.Fprintf(stderr, "lockbench sweep: %v\n", err)
		return exitUsage // before anything was measured
	}
	defer served.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := catchInterrupts(interruptedLine(ui, "Ctrl-C again to quit at once"), cancel)
	defer in.release()

	// The first progress line: how long this may take, before anything starts.
	ui.Line("sweep plan: %s", sweep.PlanTime(opts).Describe())
	tgt, file, code := prepare(ctx, cmdSweep, f, in, ui, stderr)
	if code != exitOK {
		return code
	}
	defer tgt.close()
	status := sweep.NewStatus(opts)
	ui.SetPrefix(status.Prefix)
	opts.Progress = func(e sweep.Event) {
		for _, line := range status.Update(e) {
			ui.Line("%s", line)
		}
	}
	out, err := bench.Sweep(ctx, tgt.Target, f.benchSpec(), opts, bench.Options{Reporter: ui, Metrics: served.Run}, file)
	if out == nil {
		if errors.Is(err, bench.ErrBadSpec) {
			fmt.Fprintf(stderr, "lockbench sweep: %v\n", err)
		}
		return exitUsage // spec or options refused: flags were checked, so a bug
	}
	aborted := err != nil
	if file.Placement != nil {
		fmt.Fprintln(stdout, file.Placement)
	}
	if err := sweep.WriteSummary(stdout, file.Sweep); err != nil {
		fmt.Fprintf(stderr, "lockbench sweep: summary: %v\n", err)
	}
	var gates []thresholds.Result
	if len(s.Gates) > 0 && file.Sweep != nil {
		gates = thresholds.CheckSweep(s.Gates, file.Sweep)
		if err := thresholds.WriteReport(stdout, gates); err != nil {
			fmt.Fprintf(stderr, "lockbench sweep: thresholds: %v\n", err)
		}
	}
	if !writeOutputs("sweep", f, file, stdout, stderr, ui) {
		return exitFailure
	}
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case aborted && errors.Is(err, workloads.ErrBadConfig):
		return exitUsage
	case aborted, out.Failed:
		return exitFailure
	case thresholds.Failed(gates) > 0:
		return exitThresholds
	}
	return exitOK
}
