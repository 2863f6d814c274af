package bench

import (
	"context"

	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/thresholds"
)

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
		if _, err := s.tgt.Clean(context.WithoutCancel(ctx), prefix, res.File.Cleanup, s.declared()...); err != nil {
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
