package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/sweep"
	"github.com/lockbench/lockbench/workloads"
)

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
