package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/sweep"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/workloads"
)

// SweepSteps runs a sweep's steps as runs of a Session: each round of a step is one run
// (Session.RunOne: clean keyspace, fresh client, warm-up, measured phase, checker) of the
// step's driver at the step's load. Its Run is a sweep.Options.Step, called from sweep.Run's
// goroutine, one step at a time.
type SweepSteps struct {
	Session *Session
	// Mode is the sweep's: for results.SweepConcurrency a load is the workers; otherwise it is
	// an open-loop rate, with the spec's Arrival and Concurrency (the cap on attempts in flight).
	Mode string
	// Skipped, if set, collects the skips of drivers that cannot run the workload; the runs
	// go back through sweep.Run.
	Skipped *[]results.Skip
	// Abort, if set, stops a run early (Step.Abort), e.g. OverSLO.
	Abort func(driver string, l workloads.Live) string
}

// Run runs round st of a step. A driver that cannot run the workload is skipped (the error
// wraps drivers.ErrUnsupported); a configuration the workload refuses ends the sweep (the error
// wraps sweep.ErrAbort and workloads.ErrBadConfig); a run that could not start, which the
// session reported, fails the step.
func (s *SweepSteps) Run(ctx context.Context, st sweep.Step) (results.Run, error) {
	step := Step{Driver: st.Driver, Round: max(st.Round, 1), Seq: st.Seq, Total: st.Total, Index: st.Index, Abort: s.Abort}
	if s.Mode == results.SweepConcurrency {
		step.Concurrency = int(st.Load)
	} else {
		step.Rate = st.Load
	}
	o, _ := s.Session.RunOne(ctx, step) // a run that could not run is reported by the session
	switch {
	case o.Skip != nil:
		if s.Skipped != nil {
			*s.Skipped = append(*s.Skipped, *o.Skip)
		}
		return results.Run{}, fmt.Errorf("%w: %s", drivers.ErrUnsupported, o.Skip.Reason)
	case o.BadConfig:
		return results.Run{}, fmt.Errorf("%w: %w: %s at %v", sweep.ErrAbort, workloads.ErrBadConfig, st.Driver, st.Load)
	case o.Run != nil:
		return *o.Run, nil
	}
	return results.Run{}, errors.New("the run could not start (see above)")
}

// OverSLO is a Step.Abort for a sweep's runs: once after has passed in the measured phase, it
// stops a run whose acquire latency at the SLO's percentile is already above the SLO's limit,
// saying by how much. Such a step would be judged over anyway; stopping saves its time.
func OverSLO(slo sweep.SLO, after time.Duration) func(driver string, l workloads.Live) string {
	return func(_ string, l workloads.Live) string {
		if l.Elapsed < after || l.Acquire == nil || l.Acquire.TotalCount() == 0 {
			return ""
		}
		v := time.Duration(l.Acquire.ValueAtQuantile(slo.Percentile)) * time.Microsecond
		if v <= slo.Limit {
			return ""
		}
		return fmt.Sprintf("%s %v over the SLO's %v after %.1fs", slo.Name, v, slo.Limit, l.Elapsed.Seconds())
	}
}

// Sweep runs the sweep o on t, into file: each step a run of a session of spec (SweepSteps),
// whose cleanups are not recorded in file, and with spec.AbortOnFail a step stops once it is
// already past o.SLO (OverSLO, after spec.AbortAfter) rather than on thresholds. o's Step is
// Sweep's; its Progress is the caller's. file gets the deployment's version and topology, the
// runs, the sweep record, the skips, and Complete when neither ctx nor an error ended the sweep
// early; an attached deployment is cleaned of the last step's keys. A session spec refuses
// returns a nil Outcome and an error wrapping ErrBadSpec, before anything ran; otherwise the
// error is sweep.Run's, said on opts.Reporter, with what was measured in the Outcome (nil when
// o was refused).
func Sweep(ctx context.Context, t *target.Target, spec Spec, o sweep.Options, opts Options, file *results.File) (*sweep.Outcome, error) {
	file.RedisVersion = t.RedisVersion(ctx)
	file.Topology = t.Info()
	abort := spec.AbortOnFail
	spec.AbortOnFail = false // a sweep stops a step on its SLO (OverSLO), not on thresholds
	if o.Mode == results.SweepRate && len(o.Loads) > 0 {
		// Validated at a step's rate, as every step runs (SweepSteps.Run sets its own): without
		// one, an open loop's Arrival would be refused.
		spec.Config.Rate = o.Loads[0]
	}
	opts.File = &results.File{} // the steps' cleanups are not recorded, as before bench
	session, err := NewSession(t, spec, opts)
	if err != nil {
		return nil, err
	}
	steps := &SweepSteps{Session: session, Mode: o.Mode, Skipped: &file.Skipped}
	if abort {
		steps.Abort = OverSLO(o.SLO, spec.AbortAfter)
	}
	o.Step = steps.Run
	if stop := sweepPing(t, &o, opts.Reporter); stop != nil {
		defer stop()
	}
	out, err := sweep.Run(ctx, o)
	if err != nil {
		opts.Reporter.Line("lockbench sweep: %v", err)
	}
	if t.Attached() && out != nil && len(out.Runs) > 0 {
		// As in a run: a deployment that stays up would keep the last step's keys.
		if _, err := t.Clean(context.WithoutCancel(ctx), spec.Config.KeyPrefix, file.Cleanup, declaredOf(file.Cleanup)...); err != nil {
			opts.Reporter.Line("warning: lockbench's keys for --key-prefix %q may remain: %v", spec.Config.KeyPrefix, err)
		}
	}
	if out != nil {
		file.Runs, file.Sweep = out.Runs, &out.Sweep
		file.Complete = ctx.Err() == nil && err == nil && out.Complete()
	}
	return out, err
}

// sweepPing gives a rate sweep with a noise floor its raw round trip (sweep.Options.Ping): a
// connection of its own to the first master, as the drivers connect (credentials, TLS, --net),
// and returns the function that closes it; nil when o has a Ping already or needs none. A
// master that cannot be reached is said on r: the sweep then has no round trip.
func sweepPing(t *target.Target, o *sweep.Options, r Reporter) (stop func()) {
	masters := t.Masters()
	if o.Ping != nil || o.FloorShare <= 0 || o.Mode != results.SweepRate || len(masters) == 0 {
		return nil
	}
	cfg := t.DriverConfig(0)
	p, err := sweep.NewPinger(masters[0].Addr, cfg.Conn, cfg.Dialer)
	if err != nil {
		if r == nil {
			r = Discard
		}
		r.Line("warning: no raw round trip: %v", err)
		return nil
	}
	o.Ping = p.Ping
	return p.Close
}
