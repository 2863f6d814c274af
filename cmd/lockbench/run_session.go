package main

import (
	"context"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// benchSpec is the session of runs the flags ask for (package bench runs it).
func (f *runFlags) benchSpec() bench.Spec {
	return bench.Spec{
		Drivers:          f.drivers,
		Workload:         f.workload,
		Config:           f.cfg,
		Lease:            f.lease,
		Repeat:           f.repeat,
		Baseline:         f.baseline,
		Topology:         f.spec.String(),
		Net:              netOfFleet(f),
		Thresholds:       f.thresholds,
		AbortOnFail:      f.abort.on,
		AbortAfter:       f.abort.after,
		Faults:           f.faultFlags.faults,
		TimelineInterval: f.faultFlags.interval,
		StallThreshold:   f.stall.threshold,
		AllowStalls:      f.stall.allow,
	}
}

// runner is what lockbench adds to a bench session of run or sweep: the referee (--referee),
// the generator processes (--procs, --generators docker) and the Prometheus metrics, as the
// session's hooks (bench.Options).
type runner struct {
	f        *runFlags
	tgt      *runTarget
	ui       *progressUI
	procRuns int // --procs runs started so far, to name their processes' profiles
	// referee is the run's safety referee (--referee, run_referee.go); nil without one.
	referee *refereeSession
}

// options are the session's options: progress to the UI, runs and skips into file.
func (r *runner) options(file *results.File) bench.Options {
	opts := bench.Options{Reporter: r.ui, File: file, Metrics: r.f.metrics.runMetrics}
	if r.referee != nil {
		opts.RunHere = r.runHere
	}
	if r.f.fleet.procs > 1 || r.f.gens.docker() {
		opts.Remote = r.runRemote
	}
	return opts
}

// runRemote runs one run in generator containers (--generators docker, run_generators.go) or
// processes (--procs, fleet.go).
func (r *runner) runRemote(ctx context.Context, rm *bench.Remote) (results.Run, error) {
	if r.f.gens.docker() {
		return r.runGenerators(ctx, rm)
	}
	return r.runProcs(ctx, rm)
}

// runHere runs plan in this process with the referee.
func (r *runner) runHere(ctx context.Context, plan workloads.Plan) (results.Run, error) {
	runID := collect.NewRunID()
	ref, err := r.referee.open(ctx, runID, process(0))
	if err != nil {
		return results.Run{}, err
	}
	defer ref.Close()
	plan.Config.Referee = ref
	res, err := r.referee.openResource(ctx, runID, process(0))
	if err != nil {
		return results.Run{}, err
	}
	if res != nil {
		defer res.Close()
		plan.Config.Resource = res
	}
	run, err := workloads.Run(ctx, plan)
	if err != nil {
		return run, err
	}
	run.Referee = ref.Result()
	cfg := plan.Config
	cfg.Fill()
	r.referee.settle(ctx, runID, cfg.Keys, &run, r.ui)
	return run, nil
}
