package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/target"
	"io"
	"os"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/crosscheck"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/fleet"
	"github.com/lockbench/lockbench/metrics"
	"github.com/lockbench/lockbench/referee"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// workerCommand is lockbench worker: one generator process of a run made by several.
func workerCommand(args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseRunFlagsAs(cmdWorker, args, stdout, stderr)
	if !ok {
		return code
	}
	ui := newProgressUI(stderr)
	stopProfiles, ok := profile("worker", f, stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfiles()
	if err := f.metrics.start(f, cmdWorker, ui); err != nil {
		fmt.Fprintf(stderr, "lockbench worker: %v\n", err)
		return exitUsage // before anything was measured
	}
	defer f.metrics.stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := catchInterrupts(interruptedLine(ui, "again to quit at once"), cancel)
	defer in.release()

	tgt, err := attachUntilStart(ctx, f, ui)
	if err != nil {
		fmt.Fprintf(stderr, "lockbench worker: %v\n", err)
		switch {
		case ctx.Err() != nil:
			return exitInterrupted
		case errors.Is(err, target.ErrBadSpec):
			return exitUsage
		}
		return exitFailure
	}
	defer tgt.close()

	w, _ := workloads.Get(f.workload)     // checked by parseRunFlagsAs
	drv, _ := drivers.Parse(f.drivers[0]) // checked by parseRunFlagsAs
	plan := workloads.Plan{Workload: w, Config: f.cfg, Driver: drv, Target: tgt.DriverConfig(f.lease), Progress: ui.progress, Stalls: f.fleet.stallPlan,
		Live: f.metrics.live(metrics.Labels{Driver: f.drivers[0], Workload: f.workload, Topology: f.spec.String(), Round: f.metrics.round, Generator: f.fleet.index})}
	if f.fleet.index == 0 {
		// One process measures the servers: they serve all processes, whose phases the common
		// start time lines up, so the figures are the run's; added up over processes they
		// would count every command once per process.
		plan.ServerStats = tgt.ServerStats
	}
	ff := f.fleet
	ui.line("process %d of %d: %s, %s, %d workers, %d keys; start at %v", ff.index, ff.procs, f.drivers[0], f.workload, f.cfg.Concurrency, f.cfg.Keys, ff.startAt)
	fw, closeWorker, err := fleetWorker(ctx, f, tgt, ui)
	if err != nil {
		fmt.Fprintf(stderr, "lockbench worker: --referee: %v\n", err)
		if errors.Is(err, errRefereeInput) {
			return exitUsage
		}
		return exitFailure
	}
	defer closeWorker()
	run, err := fleet.Work(ctx, plan, fw)
	ui.clear()

	file := results.NewFile(version, conn.RedactArgs(os.Args))
	file.RedisVersion = tgt.RedisVersion(ctx)
	file.Topology = tgt.Info()
	failed := false
	switch {
	case errors.Is(err, drivers.ErrUnsupported):
		reason := bench.SkipReason(f.drivers[0], err)
		ui.line("skip %s on %s: %s", f.drivers[0], f.spec, reason)
		file.Skipped = append(file.Skipped, results.Skip{Driver: f.drivers[0], Workload: f.workload, Topology: f.spec.String(), Reason: reason})
	case errors.Is(err, workloads.ErrBadConfig), errors.Is(err, crosscheck.ErrBadArena):
		fmt.Fprintf(stderr, "lockbench worker: %v\n", err)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "lockbench worker: %v\n", err)
		return exitFailure
	default:
		run.RedactSamples(tgt.Conn().Redact) // error messages leave the process redacted
		run.TopologySpec = f.spec.String()
		run.Net = f.net.String()
		if f.fleet.fleetNet != "" {
			run.Net = f.fleet.fleetNet
		}
		run.Fleet.Processes[0].Net = f.net.String()
		run.Fleet.RunID = f.collect.runID
		run.Fleet.Processes[0].Version = version
		run.Fleet.Processes[0].Image = workerImage()
		file.Runs = append(file.Runs, run)
		file.Complete = run.Complete && ctx.Err() == nil
		if run.Errors > 0 || run.Violations > 0 {
			failed = true
			ui.line("lockbench worker: %d errors, %s", run.Errors, bench.SafetySummary(&run))
		}
	}
	if err := handBack(ctx, f, file, ui); err != nil {
		fmt.Fprintf(stderr, "lockbench worker: %v\n", err)
		return exitFailure
	}
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case failed:
		return exitFailure
	}
	return exitOK
}

// fleetWorker is this process's place in the run: its index, the common start by the
// deployment's clock (--clock redis) and the run's referee (--referee), checked apart from the
// deployment. Call closeWorker when the run is over.
func fleetWorker(ctx context.Context, f *runFlags, tgt *runTarget, ui *progressUI) (fw fleet.Worker, closeWorker func(), err error) {
	ff := f.fleet
	fw = fleet.Worker{Index: ff.index, Procs: ff.procs, StartAt: ff.startAt, Arena: ff.arena}
	closeWorker = func() {}
	if ff.clock == clockRedis && !ff.startAt.IsZero() {
		if est, source, ok := tgt.measureClock(ctx, ui); ok {
			fw.Clock, fw.ClockSource = &est, source
			ui.line("%s; start at %v by it, %v from now", describeClock(est, source), ff.startAt, time.Until(est.Local(ff.startAt)).Round(time.Millisecond))
		}
	}
	if f.referee.addr != "" {
		ref, err := openWorkerReferee(ctx, f, tgt)
		if err != nil {
			return fw, closeWorker, err
		}
		fw.Referee, closeWorker = ref, ref.Close
		s := &refereeSession{flags: f.referee, resource: f.resource.kind}
		res, err := s.openResource(ctx, f.collect.runID, process(f.fleet.index))
		if err != nil {
			ref.Close()
			return fw, func() {}, err
		}
		if res != nil {
			fw.Resource, closeWorker = res, func() { res.Close(); ref.Close() }
		}
	}
	return fw, closeWorker, nil
}

// openWorkerReferee connects this process to the run's referee, refusing one that is a node of
// the deployment under test.
func openWorkerReferee(ctx context.Context, f *runFlags, tgt *runTarget) (*referee.Referee, error) {
	s := &refereeSession{flags: f.referee}
	if err := tgt.checkApart(ctx, s, process(f.fleet.index)); err != nil {
		return nil, err
	}
	return s.open(ctx, f.collect.runID, process(f.fleet.index))
}

// handBack delivers the worker's result: stored in the collection Redis (--collect), and/or
// written to --output or a new file in --out (unless --no-results, or --collect without
// --output: a container's file system may be read-only and nobody would read it).
func handBack(ctx context.Context, f *runFlags, file *results.File, ui *progressUI) error {
	if f.collect.addr != "" {
		if err := storeResult(ctx, f, file); err != nil {
			return err
		}
		ui.line("results: stored on %s under run %s", conn.RedactURL(f.collect.addr), f.collect.runID)
	}
	if f.noResults || f.collect.addr != "" && f.fleet.output == "" {
		return nil
	}
	path := f.fleet.output
	var err error
	if path == "" {
		path, err = results.WriteFile(f.out, file)
	} else {
		err = results.WriteFileAt(path, file)
	}
	if err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	ui.line("results: %s", path)
	return nil
}

// storeTimeout bounds storing the result: an interrupted worker still hands back what it
// measured, but never hangs on a store that does not answer.
const storeTimeout = 30 * time.Second

// storeResult stores the worker's result file in the collection Redis (--collect) under its run.
func storeResult(ctx context.Context, f *runFlags, file *results.File) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	s, err := collect.Open(ctx, f.collect.options())
	if err != nil {
		return fmt.Errorf("storing the result: %w", err)
	}
	defer s.Close()
	return s.Put(ctx, f.collect.runID, f.fleet.index, f.fleet.procs, file)
}

// attachRetryMin is how long a worker keeps trying to reach the deployment at least, and
// attachRetryPause how long it waits between tries.
const (
	attachRetryMin   = 10 * time.Second
	attachRetryPause = 250 * time.Millisecond
)

// attachUntilStart attaches to the deployment, trying again while it does not answer, until the
// start time or for attachRetryMin, whichever is later: pods of a Job start in any order, maybe
// before Redis, and on a loaded machine a probe can time out once.
func attachUntilStart(ctx context.Context, f *runFlags, ui *progressUI) (*runTarget, error) {
	deadline := time.Now().Add(attachRetryMin)
	if f.fleet.startAt.After(deadline) {
		deadline = f.fleet.startAt
	}
	for {
		tgt, err := startTopology(ctx, f, ui, func(compose.Topology) {})
		if err == nil || !errors.Is(err, compose.ErrUnreachable) || ctx.Err() != nil || time.Now().After(deadline) {
			return tgt, err
		}
		ui.line("%v; trying again", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(attachRetryPause):
		}
	}
}
