// Package bench runs what lockbench run runs, as a library: a session of runs of several drivers,
// interleaved over rounds, against one target (package target), each from a clean keyspace with
// a fresh client, audited afterwards, with faults, stall detection and thresholds. Outcomes are
// values (Result, Outcome); progress goes to a Reporter. Process-wide effects (CPU placement,
// signals, exit codes) are the caller's.
package bench

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/metrics"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/lockbench/lockbench/workloads"
)

// Options are how a session reports and what it leaves to its caller. The zero value runs every
// run in this process and reports nothing.
type Options struct {
	// Reporter shows progress; nil is Discard.
	Reporter Reporter
	// File receives the runs and skips, its header (version, topology, …) filled by the
	// caller; nil is a new, empty one.
	File *results.File
	// RunHere runs a plan in this process; nil is workloads.Run (with the Referee, if any).
	RunHere func(ctx context.Context, plan workloads.Plan) (results.Run, error)
	// Referee, if set, is the runs' safety referee (StartReferee): every holder, in every
	// process, marks its critical section there. The caller closes it after the session.
	Referee *Referee
	// Fleet, if set, makes every run with generator processes apart from this one (lockbench
	// run --procs, --generators docker) instead of RunHere.
	Fleet *Fleet
	// Remote, if set, runs every run elsewhere instead of RunHere and Fleet, and returns the
	// merged run: a hook for tests and other fleets.
	Remote func(ctx context.Context, r *Remote) (results.Run, error)
	// Metrics, if set, returns what a run's live figures are handed to (a Prometheus
	// exporter), or nil; labels name the run.
	Metrics func(labels metrics.Labels) func(workloads.Live)
}

// Remote is one run made by generator processes (Options.Remote).
type Remote struct {
	Driver string
	Round  int
	// Faults are the run's faults: the hook schedules them (FaultRun.Scheduled,
	// FaultRun.RunSchedule) and the session records what they did.
	Faults *FaultRun
	// Failed is set by the hook when the run it returns fails although it is recorded (a
	// process lost, a generator that failed).
	Failed bool
}

// Result is what a session did. The runs and skips are in File; the flags say how it ended.
type Result struct {
	File *results.File
	// Failed: a run could not run, or counted errors, violations, stalls, refusals or no
	// acquisition, or a fault failed.
	Failed bool
	// Aborted: AbortOnFail stopped a run, and no further run started.
	Aborted bool
	// NotStarted counts the runs left out because ctx ended or a run was aborted.
	NotStarted int
	// Thresholds are Spec.Thresholds checked on the runs (nil without any); ThresholdsFailed
	// counts those that failed.
	Thresholds       []thresholds.Result
	ThresholdsFailed int
}

// Session runs the runs of one Spec against one target. Its methods are not safe for concurrent
// use: the runs of a session run one after the other.
type Session struct {
	tgt  *target.Target
	spec Spec
	opts Options
	rep  Reporter
	w    workloads.Workload

	skipped    map[string]bool
	faultNoted bool // the note on faults over several runs is out
}

// NewSession validates spec (errors wrap ErrBadSpec) and returns a session of it on tgt.
func NewSession(tgt *target.Target, spec Spec, opts Options) (*Session, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	w, _ := workloads.Get(spec.workload()) // checked by Validate
	if opts.Reporter == nil {
		opts.Reporter = Discard
	}
	if opts.File == nil {
		opts.File = &results.File{}
	}
	s := &Session{tgt: tgt, spec: spec, opts: opts, rep: opts.Reporter, w: w, skipped: map[string]bool{}}
	switch {
	case s.opts.RunHere != nil:
	case opts.Referee != nil:
		s.opts.RunHere = s.runWithReferee
	default:
		s.opts.RunHere = workloads.Run
	}
	if opts.Remote == nil && opts.Fleet != nil {
		if opts.Fleet.Procs < 1 || opts.Fleet.Procs > MaxProcs {
			return nil, bad("--procs %d: want 1 to %d", opts.Fleet.Procs, MaxProcs)
		}
		if opts.Fleet.Nets != nil && len(opts.Fleet.Nets) != opts.Fleet.Procs {
			return nil, bad("%d network conditions for %d processes", len(opts.Fleet.Nets), opts.Fleet.Procs)
		}
		r := &remote{f: opts.Fleet, tgt: tgt, spec: spec, ref: opts.Referee, rep: s.rep}
		s.opts.Remote = r.run
	}
	return s, nil
}

// Run runs every driver of spec spec.Repeat times against tgt, interleaved and rotating the order
// each round (see RoundOrder), cleans an attached deployment of the last run's keys, marks the
// file complete or not, and checks the thresholds. Once ctx ends, the runs not yet started are
// left out. The error wraps ErrBadSpec for a spec that cannot run, workloads.ErrBadConfig
// when the workload refused it at the first run (the Result then holds what ran before);
// everything else that goes wrong is in the Result.
func Run(ctx context.Context, tgt *target.Target, spec Spec, opts Options) (*Result, error) {
	s, err := NewSession(tgt, spec, opts)
	if err != nil {
		return nil, err
	}
	return s.Run(ctx)
}

// Run runs the session's rounds; see the function Run.
func (s *Session) Run(ctx context.Context) (*Result, error) {
	res := &Result{File: s.opts.File}
	res.File.Repeat, res.File.Baseline = s.spec.rounds(), s.spec.baseline()
	total := s.spec.rounds() * len(s.spec.Drivers)
	seq := 0
	for round := range s.spec.rounds() {
		for _, name := range RoundOrder(s.spec.Drivers, round) {
			seq++
			if s.skipped[name] {
				continue
			}
			if ctx.Err() != nil || res.Aborted {
				res.NotStarted++
				continue
			}
			o, err := s.RunOne(ctx, Step{Driver: name, Round: round + 1, Seq: seq, Total: total})
			res.Failed = res.Failed || o.Failed
			res.Aborted = res.Aborted || o.Aborted
			if o.Skip != nil {
				res.File.Skipped = append(res.File.Skipped, *o.Skip)
			}
			if o.Run != nil {
				res.File.Runs = append(res.File.Runs, *o.Run)
			}
			if err != nil && o.BadConfig {
				return res, err
			}
		}
	}
	if res.NotStarted > 0 && res.Aborted {
		s.rep.Line("stopped by --abort-on-fail: %d of %d runs not started", res.NotStarted, total)
	} else if res.NotStarted > 0 {
		s.rep.Line("interrupted: %d of %d runs not started", res.NotStarted, total)
	}
	if s.tgt.Attached() && len(res.File.Runs) > 0 {
		// A deployment that stays up would keep the last run's keys (an interrupted run's
		// held locks, say) until their leases ran out.
		prefix := s.keyPrefix()
		if _, err := s.tgt.Clean(context.WithoutCancel(ctx), prefix, res.File.Cleanup); err != nil {
			s.rep.Line("warning: lockbench's keys for --key-prefix %q may remain: %v", prefix, err)
		}
	}
	res.File.Complete = ctx.Err() == nil && !res.Failed
	for _, run := range res.File.Runs {
		res.File.Complete = res.File.Complete && run.Complete
	}
	if len(res.File.Runs) == 0 && len(res.File.Skipped) > 0 && ctx.Err() == nil {
		s.rep.Line("nothing ran: every driver was skipped on %s", s.spec.Topology)
	}
	if len(s.spec.Thresholds) > 0 {
		res.Thresholds = thresholds.Check(s.spec.Thresholds, res.File.Runs)
		res.ThresholdsFailed = thresholds.Failed(res.Thresholds)
	}
	return res, nil
}

// keyPrefix is the prefix of the session's lock names, with its default.
func (s *Session) keyPrefix() string {
	cfg := s.spec.Config
	cfg.Fill()
	return cfg.KeyPrefix
}

// RoundOrder returns the drivers in the order round r (0-based) runs them: rotated right by r
// (a b c, then c a b, then b c a), so that over len(names) rounds every driver runs once in
// every position and none always runs first on a cold server or last on a warm one.
func RoundOrder(names []string, r int) []string {
	n := len(names)
	out := make([]string, n)
	for i := range out {
		out[i] = names[((i-r)%n+n)%n]
	}
	return out
}

// abortCheck is the live check of Spec.AbortOnFail: the thresholds that can be checked on the
// phase so far, once AbortAfter of it has passed; nil without AbortOnFail.
func (s *Session) abortCheck() func(driver string, l workloads.Live) string {
	if !s.spec.AbortOnFail {
		return nil
	}
	ths, after := s.spec.Thresholds, s.spec.AbortAfter
	return func(driver string, l workloads.Live) string {
		if l.Elapsed < after {
			return ""
		}
		return thresholds.Live(ths, driver, &l.Run)
	}
}

// where is the progress lines' name for a run: "[3/8]", with its round when there are several.
func (s *Session) where(st Step) string {
	w := fmt.Sprintf("[%d/%d]", st.Seq, st.Total)
	if s.spec.rounds() > 1 {
		w += fmt.Sprintf(" round %d/%d", st.Round, s.spec.rounds())
	}
	return w
}

// runWithReferee runs plan in this process with the session's referee: its workers mark their
// critical sections there, and the run's count is read back from it.
func (s *Session) runWithReferee(ctx context.Context, plan workloads.Plan) (results.Run, error) {
	ref := s.opts.Referee
	runID := collect.NewRunID()
	mark, err := ref.open(ctx, runID, ProcessName(0))
	if err != nil {
		return results.Run{}, err
	}
	defer mark.Close()
	plan.Config.Referee = mark
	res, err := ref.openResource(ctx, runID, ProcessName(0))
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
	run.Referee = mark.Result()
	cfg := plan.Config
	cfg.Fill()
	ref.settle(ctx, runID, cfg.Keys, &run, s.rep)
	return run, nil
}
