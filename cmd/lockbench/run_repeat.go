package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/collect"
	"strings"

	"github.com/lockbench/lockbench/acl"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/metrics"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// roundOrder returns the drivers in the order round r (0-based) runs them: rotated right by r
// (a b c, then c a b, then b c a), so that over len(names) rounds every driver runs once in
// every position and none always runs first on a cold server or last on a warm one.
func roundOrder(names []string, r int) []string {
	n := len(names)
	out := make([]string, n)
	for i := range out {
		out[i] = names[((i-r)%n+n)%n]
	}
	return out
}

// runner runs every driver --repeat times, interleaved, against one target, and collects the
// runs and skips into file.
type runner struct {
	f    *runFlags
	tgt  *runTarget
	ui   *progressUI
	file *results.File

	// failed: a run could not run, counted errors or violations. badConfig: the workload
	// refused the configuration, which is a usage error.
	failed, badConfig bool
	skipped           map[string]bool
	faultNoted        bool // the note on faults over several runs is out (run_faults.go)
	procRuns          int  // --procs runs started so far, to name their processes' profiles
	// abort, if set, stops a measured phase early (--abort-on-fail, run_abort.go); aborted:
	// it did, and lockbench run starts no further run. step is a sweep's step, for the
	// metrics' labels (0 in run).
	abort   func(driver string, l workloads.Live) string
	aborted bool
	step    int
	// referee is the run's safety referee (--referee, run_referee.go); nil without one.
	referee *refereeSession
}

// runHere runs plan in this process, with the referee when there is one.
func (r *runner) runHere(ctx context.Context, plan workloads.Plan) (results.Run, error) {
	if r.referee == nil {
		return workloads.Run(ctx, plan)
	}
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

// runAll runs the rounds. Once ctx ends, the runs not yet started are left out.
func (r *runner) runAll(ctx context.Context) {
	f := r.f
	w, _ := workloads.Get(f.workload)
	r.skipped = make(map[string]bool)
	total := f.repeat * len(f.drivers)
	seq, notStarted := 0, 0
	for round := range f.repeat {
		for _, name := range roundOrder(f.drivers, round) {
			seq++
			if r.skipped[name] {
				continue
			}
			if ctx.Err() != nil || r.aborted {
				notStarted++
				continue
			}
			r.runOne(ctx, w, name, round+1, seq, total)
			if r.badConfig {
				return
			}
		}
	}
	if notStarted > 0 && r.aborted {
		r.ui.line("stopped by --abort-on-fail: %d of %d runs not started", notStarted, total)
	} else if notStarted > 0 {
		r.ui.line("interrupted: %d of %d runs not started", notStarted, total)
	}
}

func (r *runner) runOne(ctx context.Context, w workloads.Workload, name string, round, seq, total int) {
	f, ui := r.f, r.ui
	if n, err := r.tgt.Clean(ctx, f.cfg.KeyPrefix, r.file.Cleanup); err != nil {
		ui.line("warning: keyspace not clean before %s: %v", name, err)
	} else if n > 0 {
		ui.line("deleted %d of lockbench's keys for --key-prefix %q", n, f.cfg.KeyPrefix)
	}
	drv, _ := drivers.Parse(name) // checked by parseRunFlags
	where := fmt.Sprintf("[%d/%d]", seq, total)
	if f.repeat > 1 {
		where += fmt.Sprintf(" round %d/%d", round, f.repeat)
	}
	ui.setRound(round, f.repeat)
	ui.line("%s %s: %s on %s, %d workers, %d keys (%s), warm-up %v, measuring %v",
		where, name, f.workload, f.spec, f.cfg.Concurrency, f.cfg.Keys, f.cfg.KeyDist, max(f.cfg.Warmup, 0), f.cfg.Duration)
	plan := workloads.Plan{
		Workload:    w,
		Config:      f.cfg,
		Driver:      drv,
		Target:      r.tgt.DriverConfig(f.lease),
		ServerStats: r.tgt.ServerStats,
		Progress:    ui.progress,
		Live:        f.metrics.live(metrics.Labels{Driver: name, Workload: f.workload, Topology: f.spec.String(), Round: round, Step: r.step}, r.abort),
	}
	fr := r.withFaults(ctx, &plan)                      // run_faults.go
	stalls := r.tgt.watchStalls(ctx, f.stall.threshold) // run_stall.go
	defer stalls.stop()
	if f.stall.bounded(f) && plan.ServerStats != nil {
		plan.ServerStats = stalls.guard(f.stall.threshold, plan.ServerStats)
	}
	var run results.Run
	var err error
	switch {
	case f.gens.docker():
		run, err = r.runGenerators(ctx, name, fr) // run_generators.go
	case f.fleet.procs > 1:
		run, err = r.runProcs(ctx, name, round, fr) // fleet.go
	default:
		run, err = r.runHere(ctx, plan)
	}
	silent, _ := stalls.silentNow(f.stall.threshold)
	stalls.stop()
	ui.clear()
	switch {
	case errors.Is(err, drivers.ErrUnsupported):
		// Not a failure: the driver cannot do this, and says why. Later rounds leave it out.
		r.skipped[name] = true
		reason := skipReason(name, err)
		ui.line("skip %s on %s: %s", name, f.spec, reason)
		r.file.Skipped = append(r.file.Skipped, results.Skip{Driver: name, Workload: f.workload, Topology: f.spec.String(), Reason: reason})
		return
	case errors.Is(err, workloads.ErrBadConfig):
		ui.line("lockbench run: %s: %v", name, err)
		r.failed, r.badConfig = true, true
		return
	case err != nil:
		r.failed = true
		ui.line("lockbench run: %s: %v", name, r.tgt.Conn().Redact(err.Error()))
		if acl.IsRefusal(err) {
			ui.line("lockbench run: %s: %s", name, r.tgt.ExplainRefusal(ctx, f.cfg.KeyPrefix))
		}
		return
	}
	run.Round = round
	run.TopologySpec = f.spec.String()
	run.Net = netOfFleet(f)
	fr.record(&run)
	run.RedactSamples(r.tgt.Conn().Redact)
	if silent != "" && f.stall.bounded(f) {
		ui.line("lockbench run: %s: post-run audit skipped: %s is not answering", name, silent)
	} else {
		r.auditRun(ctx, &run)
	}
	for _, flt := range faultsFailed(&run) {
		r.failed = true
		ui.line("lockbench run: %s: fault %s failed: %s", name, flt.Spec, flt.Error)
	}
	// With faults, errors are what the faults are expected to cause: reported, not a failure;
	// so are lock keys they stranded with a TTL. Keys without one still fail the run.
	if len(run.Faults) > 0 && run.Errors > 0 && (run.ErrorsByKind["leftover_keys"] == 0 || strandedOnly(&run)) {
		ui.line("lockbench run: %s: %d errors under faults %v%s", name, run.Errors, run.ErrorsByKind, causeHint(&run))
	} else if run.Errors > 0 {
		r.failed = true
		ui.line("lockbench run: %s: %d errors %v%s", name, run.Errors, run.ErrorsByKind, causeHint(&run))
	}
	r.checkSilentZero(ctx, name, &run) // run_refusals.go
	r.checkStall(name, &run, stalls)
	if run.ErrorsByKind[workloads.KindACLRefused] > 0 {
		r.failed = true
		ui.line("lockbench run: %s: %d operations refused by the server's ACL: %s", name, run.ErrorsByKind[workloads.KindACLRefused], r.tgt.ExplainRefusal(ctx, f.cfg.KeyPrefix))
	}
	if run.Violations > 0 {
		r.failed = true
		ui.line("lockbench run: %s: SAFETY: %s", name, safetySummary(&run))
	}
	if run.Aborted != "" {
		r.aborted = true
		ui.line("lockbench run: %s: stopped early: %s", name, run.Aborted)
	}
	r.file.Runs = append(r.file.Runs, run)
}

// safetySummary says how many safety violations run had and of which kind: fencing tokens out of
// grant order (run.FencingViolations) or two holders of one lock at once (the rest).
func safetySummary(run *results.Run) string {
	if h := run.Holds; h != nil && h.CountMismatches+h.LeasesLost > 0 {
		return fmt.Sprintf("%d violations: %d leases lost while held, %d hold counts in Redis other than the nesting level, the rest two holders of one lock at once",
			run.Violations, h.LeasesLost, h.CountMismatches)
	}
	switch n := run.FencingViolations; {
	case n > 0 && n >= run.Violations: // not with none at all: a worker says so beside its errors
		return fmt.Sprintf("%d violations, all fencing tokens out of grant order", n)
	case n > 0:
		return fmt.Sprintf("%d violations, %d of them fencing tokens out of grant order (the rest: two holders of one lock at once)", run.Violations, n)
	}
	return fmt.Sprintf("%d mutual-exclusion violations (two holders of one lock at once)", run.Violations)
}

// skipReason is err's text without what the layers below put in front of the reason ("driver
// <name>: ", the sentinel's own text): the skip line says both already.
func skipReason(name string, err error) string {
	s := err.Error()
	for _, p := range []string{"driver " + name + ": ", drivers.ErrUnsupported.Error() + ": "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}
