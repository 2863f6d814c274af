package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/sweep"
	"github.com/lockbench/lockbench/workloads"
)

// sweepCommand is lockbench sweep: the flags become sweep.Options, each step a run of one bench
// session, and the outcome a result file, a summary and an exit code (see sweepExamples).
func sweepCommand(args []string, stdout, stderr io.Writer) int {
	f, s, code, ok := parseSweepFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	opts := s.options(f)
	if s.dryRun {
		if err := sweep.WritePlan(stdout, opts, f.cfg.Warmup); err != nil {
			fmt.Fprintf(stderr, "lockbench sweep: plan: %v\n", err)
		}
		return exitOK
	}
	ui := newProgressUI(stderr)
	stopProfiles, ok := profile("sweep", f, stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfiles()
	if err := f.metrics.start(1, ui); err != nil {
		fmt.Fprintf(stderr, "lockbench sweep: %v\n", err)
		return exitUsage // before anything was measured
	}
	defer f.metrics.stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := catchInterrupts(interruptedLine(ui, "Ctrl-C again to quit at once"), cancel)
	defer in.release()

	// The first progress line: how long this may take, before anything starts.
	ui.line("sweep plan: %s", sweep.PlanTime(opts).Describe())
	tgt, file, code := prepare(ctx, cmdSweep, f, in, ui, stderr)
	if code != exitOK {
		return code
	}
	defer tgt.close()
	file.RedisVersion = tgt.RedisVersion(ctx)
	file.Topology = tgt.Info()
	spec := f.benchSpec()
	spec.AbortOnFail = false // a sweep stops a step on its SLO (bench.OverSLO), not on thresholds
	if s.mode == results.SweepRate {
		// Validated at a step's rate, as every step runs (bench.SweepSteps.Run sets its own): without
		// one, the --arrival the sweep's flags set would be refused.
		spec.Config.Rate = s.loads[0]
	}
	// The steps' cleanups are not recorded (the session's own file), as before bench.
	session, err := bench.NewSession(tgt.Target, spec, bench.Options{Reporter: ui, File: &results.File{}, Metrics: f.metrics.runMetrics})
	if err != nil {
		fmt.Fprintf(stderr, "lockbench sweep: %v\n", err)
		return exitUsage // flags were checked: a bug
	}
	steps := &bench.SweepSteps{Session: session, Mode: s.mode, Skipped: &file.Skipped}
	if f.abort.on {
		steps.Abort = bench.OverSLO(s.goal, f.abort.after)
	}
	status := sweep.NewStatus(opts)
	ui.mu.Lock()
	ui.prefix = status.Prefix
	ui.mu.Unlock()
	opts.Step = steps.Run
	opts.Progress = func(e sweep.Event) {
		for _, line := range status.Update(e) {
			ui.line("%s", line)
		}
	}
	out, err := sweep.Run(ctx, opts)
	aborted := err != nil
	if aborted {
		ui.line("lockbench sweep: %v", err)
	}
	if tgt.Attached() && out != nil && len(out.Runs) > 0 {
		// As in run: a deployment that stays up would keep the last step's keys.
		if _, err := tgt.Clean(context.WithoutCancel(ctx), f.cfg.KeyPrefix, file.Cleanup); err != nil {
			ui.line("warning: lockbench's keys for --key-prefix %q may remain: %v", f.cfg.KeyPrefix, err)
		}
	}
	if out == nil {
		return exitUsage // options refused before anything ran: flags were checked, so a bug
	}
	file.Runs, file.Sweep = out.Runs, &out.Sweep
	file.Complete = ctx.Err() == nil && !aborted && out.Complete()
	if file.Placement != nil {
		fmt.Fprintln(stdout, file.Placement)
	}
	if err := sweep.WriteSummary(stdout, file.Sweep); err != nil {
		fmt.Fprintf(stderr, "lockbench sweep: summary: %v\n", err)
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
	}
	return exitOK
}
