package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/sweep"
	"github.com/lockbench/lockbench/workloads"
)

const sweepExamples = `
Examples:
  # Closed loop: 1 to 128 workers, lockcore and naive interleaved, knee at p99 <= 5ms:
  lockbench sweep --driver lockcore,naive --concurrency-steps 1,2,4,8,16,32,64,128 --slo p99=5ms --duration 3s

  # Open loop: 8 arrival rates spaced geometrically from 2000/s to 200000/s, knee at p99 <= 2ms:
  lockbench sweep --driver lockcore,naive --rate-from 2000 --rate-to 200000 --steps 8 --slo p99=2ms --duration 3s

  # Rates given one by one, knee on the 99.9th percentile:
  lockbench sweep --rates 1000,5000,10000,20000 --slo p999=10ms

  # The plan and the most time it may take, without measuring:
  lockbench sweep --driver lockcore,naive --rate-from 5000 --rate-to 160000 --steps 6 --slo p99=2ms --dry-run

Each step is a full run (fresh client, clean keyspace, warm-up, measured phase, safety checker)
with every other flag as in 'lockbench run', repeated --rounds times (default 3). Drivers are
interleaved: each round of a load runs on every driver still stepping before the next round.

A step's verdict, on the acquire latency at the --slo percentile of its rounds pooled:
  ok          the load was achieved, and the pooled percentile and its interval across the
              rounds are within the SLO
  over        the load was achieved, but the pooled percentile and the interval are above it
  uncertain   the interval straddles the SLO (or the pooled figure and the interval disagree)
              even after --max-rounds rounds (one more at a time while that can narrow it); the
              interval is of order statistics of the rounds' percentiles (3 rounds: their
              range, 75% coverage; 6: the 2nd to the 5th, 78%)
  saturated   the load was not achieved: open loop, the achieved rate is more than
              --saturation-margin below the target, or more than that share of the schedule
              was not kept (attempts late or dropped because all --concurrency workers were
              busy); closed loop, the throughput is more than --saturation-margin below the
              best of the driver's lower steps (more workers got less done)
  failed      errors or safety violations (or the run could not start)
A driver stops stepping after a step that failed, a saturated step (closed loop: the second
saturated step in a row, since one step's dip on a shared machine may be noise), or a step whose
percentile is above --stop-factor × the SLO.

The knee is a bracket: at or above the highest load that was ok, below the lowest load above it
that was not. After the grid, each bracket is bisected until its upper load is within
--precision (default 5%) of its lower one, or --budget (default 10m) would be passed; refined
steps are reported like grid steps. A rate sweep first measures each driver's noise floor at
--noise-floor × the first rate, and warns when it is within 2 × of the SLO. --dry-run prints the
plan and the most time it may take; the first progress line says it too.

Output: the steps and the knees on stdout, progress on stderr (on a terminal: the step, the time
elapsed and the most left), and in --out one result file for the whole sweep: every step a run,
plus a "sweep" record (mode, loads, SLO, rounds, every step's verdict and interval, the noise
floor, each driver's knee bracket and why it stopped).

Exit codes: 0 the sweep ran (with or without a knee), 1 a step failed (errors, safety
violations), 2 bad input (flags, SLO, steps, an --out that cannot be written, an --addr that
does not answer), 130 interrupted (the steps done are written, marked incomplete).
`

func sweepCommand(args []string, stdout, stderr io.Writer) int {
	f, s, code, ok := parseSweepFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	opts := sweepOptions(f, s)
	plan := sweep.PlanTime(opts)
	if s.dryRun {
		writePlan(stdout, f, s, plan)
		return exitOK
	}
	ui := newProgressUI(stderr)
	stopProfiles, ok := profile("sweep", f, stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfiles()
	if err := f.metrics.start(f, cmdSweep, ui); err != nil {
		fmt.Fprintf(stderr, "lockbench sweep: %v\n", err)
		return exitUsage // before anything was measured
	}
	defer f.metrics.stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := catchInterrupts(interruptedLine(ui, "Ctrl-C again to quit at once"), cancel)
	defer in.release()

	// The first progress line: how long this may take, before anything starts.
	ui.line("sweep plan: %s", planLine(plan))
	tgt, err := startTopology(ctx, f, ui, func(t compose.Topology) { in.onHardStop(func() { t.Close() }) })
	if err != nil {
		fmt.Fprintf(stderr, "lockbench sweep: %v\n", err)
		switch {
		case ctx.Err() != nil:
			return exitInterrupted
		case errors.Is(err, compose.ErrBadSpec), errors.Is(err, compose.ErrTopologyMismatch), len(f.addrs) > 0:
			// Nothing was measured: the --addr given does not answer, or is not --topology.
			return exitUsage
		}
		return exitFailure
	}
	defer tgt.close()
	if !tgt.prefixAllowed(ctx, "sweep", f.cfg.KeyPrefix, ui, stderr) {
		return exitUsage // nothing was measured
	}

	file := results.NewFile(version, conn.RedactArgs(os.Args))
	if msg, code := checkAttachedKeyspace(ctx, f, tgt, file, ui); msg != "" {
		fmt.Fprintf(stderr, "lockbench sweep: %s\n", msg)
		return code // before anything ran or was deleted
	}
	file.RedisVersion = tgt.RedisVersion(ctx)
	file.Topology = tgt.Info()
	file.Placement = f.pin.placement
	spec := f.benchSpec()
	spec.AbortOnFail = false // a sweep stops a step on its SLO (sweepSteps.abort), not on thresholds
	if s.mode == results.SweepRate {
		// Validated at a step's rate, as every step runs (sweepSteps.run sets its own): without
		// one, the --arrival the sweep's flags set would be refused.
		spec.Config.Rate = s.loads[0]
	}
	// The steps' cleanups are not recorded (the session's own file), as before bench.
	session, err := bench.NewSession(tgt.Target, spec, bench.Options{Reporter: ui, File: &results.File{}, Metrics: f.metrics.runMetrics})
	if err != nil {
		fmt.Fprintf(stderr, "lockbench sweep: %v\n", err)
		return exitUsage // flags were checked: a bug
	}
	steps := &sweepSteps{session: session, mode: s.mode, file: file, abort: f.abort.sweepCheck(s.goal)}
	status := newSweepStatus(s.goal)
	ui.mu.Lock()
	ui.prefix = status.prefix
	ui.mu.Unlock()
	opts.Step = steps.run
	opts.Progress = func(e sweep.Event) { status.report(ui, s.mode, len(s.loads), e) }
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
	file.Complete = ctx.Err() == nil && !aborted && !out.Failed
	for _, run := range file.Runs {
		file.Complete = file.Complete && run.Complete
	}
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

// sweepSteps runs one sweep step as lockbench run runs one run (bench.Session.RunOne: clean
// keyspace, fresh client, warm-up, measured phase, checker), with the step's load.
type sweepSteps struct {
	session *bench.Session
	mode    string
	file    *results.File // collects the skips; the runs come back through sweep.Run
	// abort stops a step already past the SLO (--abort-on-fail); nil without it.
	abort func(driver string, l workloads.Live) string
}

func (s *sweepSteps) run(ctx context.Context, st sweep.Step) (results.Run, error) {
	step := bench.Step{Driver: st.Driver, Round: max(st.Round, 1), Seq: st.Seq, Total: st.Total, Index: st.Index, Abort: s.abort}
	if s.mode == results.SweepConcurrency {
		step.Concurrency = int(st.Load)
	} else {
		// Open loop; --arrival and --concurrency (the cap on attempts in flight) as given.
		step.Rate = st.Load
	}
	o, _ := s.session.RunOne(ctx, step) // a run that could not run is reported by the session
	switch {
	case o.Skip != nil:
		s.file.Skipped = append(s.file.Skipped, *o.Skip)
		return results.Run{}, fmt.Errorf("%w: %s", drivers.ErrUnsupported, o.Skip.Reason)
	case o.BadConfig:
		return results.Run{}, fmt.Errorf("%w: %w: %s at %v", sweep.ErrAbort, workloads.ErrBadConfig, st.Driver, st.Load)
	case o.Run != nil:
		return *o.Run, nil
	}
	return results.Run{}, errors.New("the run could not start (see above)")
}

// sweepStatus is what the progress line shows between a step's start and end. Safe for
// concurrent use.
type sweepStatus struct {
	slo string  // the SLO percentile's name
	pct float64 // and its value

	mu        sync.Mutex
	text      string    // "step 3/8 lockcore 16 workers (run 5/16)"
	began     time.Time // the step's start
	start     time.Time // the sweep's start
	remaining time.Duration
}

func newSweepStatus(slo sweep.SLO) *sweepStatus {
	return &sweepStatus{slo: slo.Name, pct: slo.Percentile, start: time.Now()}
}

// prefix starts the per-second progress line: the step, the sweep's elapsed time and the most
// time left, counted down within the step.
func (st *sweepStatus) prefix() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	left := max(st.remaining-time.Since(st.began), 0)
	return fmt.Sprintf("%s  %s elapsed, ≤%s left |", st.text, roundSecond(time.Since(st.start)), roundSecond(left))
}

// report logs a run's start and end and a step's verdict, and updates the progress line.
func (st *sweepStatus) report(ui *progressUI, mode string, steps int, e sweep.Event) {
	load := fmt.Sprintf("%v/s", e.Step.Load)
	if mode == results.SweepConcurrency {
		load = fmt.Sprintf("%v workers", e.Step.Load)
		if e.Step.Load == 1 {
			load = "1 worker"
		}
	}
	var step string
	switch {
	case e.Step.Floor:
		step = fmt.Sprintf("noise floor %s %s", e.Step.Driver, load)
	case e.Step.Refined:
		step = fmt.Sprintf("refined step r%d %s %s", e.Step.Index-steps, e.Step.Driver, load)
	default:
		step = fmt.Sprintf("step %d/%d %s %s", e.Step.Index, steps, e.Step.Driver, load)
	}
	switch {
	case !e.Done:
		st.mu.Lock()
		st.text = fmt.Sprintf("%s round %d (run %d/%d)", step, e.Step.Round, e.Step.Seq, e.Step.Total)
		st.began, st.remaining = time.Now(), e.Remaining
		st.mu.Unlock()
		ui.line("sweep %s: %s elapsed, at most %s left", st.text, roundSecond(e.Elapsed), roundSecond(e.Remaining))
	case !e.Decided:
		// A round's end: its own figures; the step's verdict comes when its rounds are in.
		if r := e.Run; r != nil {
			rate := r.ThroughputPerS
			if r.AchievedRate > 0 {
				rate = r.AchievedRate
			}
			lat, _ := sweep.LatencyUS(r, st.pct)
			ui.line("sweep %s round %d: %.0f acq/s, %s %v", step, e.Step.Round, rate, st.slo, roundMicros(lat))
		}
	default:
		r := e.Result
		line := fmt.Sprintf("sweep %s: %.0f acq/s, %s %v", step, r.ThroughputPerS, st.slo, roundMicros(r.LatencyUS))
		if iv := r.Interval; iv != nil {
			line += fmt.Sprintf(" (%v to %v over %d rounds)", roundMicros(iv.LowUS), roundMicros(iv.HighUS), len(r.Runs))
		}
		line += ": " + r.Verdict
		if r.Reason != "" && r.Verdict != results.VerdictOK && r.Verdict != results.VerdictOver {
			line += " (" + r.Reason + ")"
		}
		ui.line("%s", line)
		if e.StopReason != "" {
			ui.line("sweep: %s takes no further step: %s", e.Step.Driver, e.StopReason)
		}
	}
}

func roundMicros(us float64) time.Duration {
	return (time.Duration(us) * time.Microsecond).Round(10 * time.Microsecond)
}

func roundSecond(d time.Duration) time.Duration { return d.Round(time.Second) }

// sweepOptions is the sweep as the flags ask for it; Run's step and progress functions are
// the caller's.
func sweepOptions(f *runFlags, s *sweepFlags) sweep.Options {
	return sweep.Options{
		Mode:             s.mode,
		Loads:            s.loads,
		Drivers:          f.drivers,
		SLO:              s.goal,
		SaturationMargin: s.margin,
		StopFactor:       s.factor,
		Rounds:           s.rounds,
		MaxRounds:        s.maxRnds,
		Precision:        s.precision,
		Budget:           s.budget,
		FloorShare:       s.floor,
		StepTime:         max(f.cfg.Warmup, 0) + f.cfg.Duration + time.Second,
		Duration:         f.cfg.Duration,
		// Beside the knee: what the masters' CPU at the knee step says Redis could take.
		ProjectCapacity: results.MedianProjection,
	}
}

// planLine is the plan's time in one line: the typical and the most, and the runs behind them.
func planLine(p sweep.Plan) string {
	line := fmt.Sprintf("about %v if every step is decided in its first rounds and no driver stops early, at most %v", roundSecond(p.Typical), roundSecond(p.Max))
	var parts []string
	if p.FloorRuns > 0 {
		parts = append(parts, fmt.Sprintf("%d noise-floor runs", p.FloorRuns))
	}
	parts = append(parts, fmt.Sprintf("%d to %d grid runs", p.GridRuns, p.MaxGridRuns))
	if p.RefineSteps > 0 {
		parts = append(parts, fmt.Sprintf("up to %d refined steps per driver (%d runs, %v, bounded by the budget)", p.RefineSteps, p.MaxRefineRuns, roundSecond(p.Refine)))
	}
	return line + " (" + strings.Join(parts, ", ") + ")"
}

// writePlan prints what lockbench sweep --dry-run plans: the loads, the drivers, the rounds,
// the refinement and the most time it may take.
func writePlan(w io.Writer, f *runFlags, s *sweepFlags, p sweep.Plan) {
	loads := make([]string, len(s.loads))
	for i, l := range s.loads {
		loads[i] = strconv.FormatFloat(l, 'f', -1, 64)
	}
	unit := "acquisitions/s (open loop)"
	if s.mode == results.SweepConcurrency {
		unit = "workers (closed loop)"
	}
	fmt.Fprintf(w, "sweep over %s: %s %s\n", s.mode, strings.Join(loads, ", "), unit)
	fmt.Fprintf(w, "drivers, interleaved: %s\n", strings.Join(f.drivers, ", "))
	fmt.Fprintf(w, "SLO: acquire %s\n", s.goal)
	fmt.Fprintf(w, "each run: warm-up %v, measuring %v (about %v with set-up)\n", max(f.cfg.Warmup, 0), f.cfg.Duration, max(f.cfg.Warmup, 0)+f.cfg.Duration+time.Second)
	if p.FloorRuns > 0 {
		fmt.Fprintf(w, "noise floor: one run per driver at %g%% of the first rate\n", 100*s.floor)
	}
	fmt.Fprintf(w, "rounds: %d per step, up to %d while uncertain\n", s.rounds, s.maxRnds)
	if s.precision > 0 {
		budget := "no time bound"
		if s.budget > 0 {
			budget = "at most " + s.budget.String()
		}
		fmt.Fprintf(w, "refinement: bisect each knee's bracket to within %g%%, %s\n", 100*s.precision, budget)
	}
	fmt.Fprintf(w, "time: %s\n", planLine(p))
}
