package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/acl"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/metrics"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// RunOne runs one step as lockbench run runs each run: cleans the keyspace, starts a fresh
// client, warms up, measures, audits and judges. The error is the run's when it could not run
// (wrapping drivers.ErrUnsupported for a skip, workloads.ErrBadConfig for a refused
// configuration); a run that ran and failed is reported in the Outcome, with a nil error.
func (s *Session) RunOne(ctx context.Context, st Step) (Outcome, error) {
	var o Outcome
	spec, rep, name := s.spec, s.rep, st.Driver
	cfg := spec.Config
	if st.Concurrency != 0 {
		cfg.Concurrency = st.Concurrency
	}
	if st.Rate != 0 {
		cfg.Rate = st.Rate
	}
	prefix := s.keyPrefix()
	if n, err := s.tgt.Clean(ctx, prefix, s.opts.File.Cleanup, s.declared()...); err != nil {
		rep.Line("warning: keyspace not clean before %s: %v", name, err)
	} else if n > 0 {
		rep.Line("deleted %d of lockbench's keys for --key-prefix %q", n, prefix)
	}
	drv, err := drivers.Parse(name)
	if err != nil { // not one of Spec.Drivers, which Validate checked
		o.Failed = true
		return o, fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	shown := cfg
	shown.Fill()
	rep.SetRound(st.Round, spec.rounds())
	rep.Line("%s %s: %s on %s, %d workers, %d keys (%s), warm-up %v, measuring %v",
		s.where(st), name, spec.workload(), spec.Topology, shown.Concurrency, shown.Keys, shown.KeyDist, shown.Warmup, shown.Duration)
	abort := s.abortCheck()
	if st.Abort != nil {
		abort = st.Abort
	}
	plan := workloads.Plan{
		Workload:    s.w,
		Config:      cfg,
		Driver:      drv,
		Target:      s.tgt.DriverConfig(spec.Lease),
		ServerStats: s.tgt.ServerStats,
		Progress:    rep.Progress,
		Live:        s.live(metrics.Labels{Driver: name, Workload: spec.workload(), Topology: spec.Topology, Round: st.Round, Step: st.Index}, abort),
	}
	fr := s.withFaults(ctx, &plan)
	stalls := watchStalls(ctx, s.tgt, spec.StallThreshold)
	defer stalls.stop()
	if spec.stallsBounded() && plan.ServerStats != nil {
		plan.ServerStats = stalls.guard(spec.StallThreshold, plan.ServerStats)
	}
	var run results.Run
	if s.opts.Remote != nil {
		r := &Remote{Driver: name, Round: st.Round, Faults: fr}
		run, err = s.opts.Remote(ctx, r)
		o.Failed = r.Failed
	} else {
		run, err = s.opts.RunHere(ctx, plan)
	}
	silent, _ := stalls.silentNow(spec.StallThreshold)
	stalls.stop()
	rep.Clear()
	switch {
	case errors.Is(err, drivers.ErrUnsupported):
		// Not a failure: the driver cannot do this, and says why. Later rounds leave it out.
		s.skipped[name] = true
		reason := SkipReason(name, err)
		rep.Line("skip %s on %s: %s", name, spec.Topology, reason)
		o.Skip = &results.Skip{Driver: name, Workload: spec.workload(), Topology: spec.Topology, Reason: reason}
		return o, err
	case errors.Is(err, workloads.ErrBadConfig):
		rep.Line("lockbench run: %s: %v", name, err)
		o.Failed, o.BadConfig = true, true
		return o, err
	case err != nil:
		o.Failed = true
		rep.Line("lockbench run: %s: %v", name, s.tgt.Conn().Redact(err.Error()))
		if acl.IsRefusal(err) {
			rep.Line("lockbench run: %s: %s", name, s.tgt.ExplainRefusal(ctx, prefix))
		}
		return o, err
	}
	run.Round = st.Round
	run.TopologySpec = spec.Topology
	run.Net = spec.Net
	fr.record(&run)
	run.RedactSamples(s.tgt.Conn().Redact)
	if silent != "" && spec.stallsBounded() {
		rep.Line("lockbench run: %s: post-run audit skipped: %s is not answering", name, silent)
	} else {
		s.auditRun(ctx, &run)
	}
	for _, flt := range faultsFailed(&run) {
		o.Failed = true
		rep.Line("lockbench run: %s: fault %s failed: %s", name, flt.Spec, flt.Error)
	}
	// With faults, errors are what the faults are expected to cause: reported, not a failure;
	// so are lock keys they stranded with a TTL. Keys without one still fail the run.
	if len(run.Faults) > 0 && run.Errors > 0 && (run.ErrorsByKind["leftover_keys"] == 0 || strandedOnly(&run)) {
		rep.Line("lockbench run: %s: %d errors under faults %v%s", name, run.Errors, run.ErrorsByKind, causeHint(&run))
	} else if run.Errors > 0 {
		o.Failed = true
		rep.Line("lockbench run: %s: %d errors %v%s", name, run.Errors, run.ErrorsByKind, causeHint(&run))
	}
	s.checkSilentZero(ctx, name, &run, &o)
	s.checkStall(name, &run, stalls, &o)
	if run.ErrorsByKind[workloads.KindACLRefused] > 0 {
		o.Failed = true
		rep.Line("lockbench run: %s: %d operations refused by the server's ACL: %s", name, run.ErrorsByKind[workloads.KindACLRefused], s.tgt.ExplainRefusal(ctx, prefix))
	}
	if run.Violations > 0 {
		o.Failed = true
		rep.Line("lockbench run: %s: SAFETY: %s", name, SafetySummary(&run))
	}
	if run.Aborted != "" {
		o.Aborted = true
		rep.Line("lockbench run: %s: stopped early: %s", name, run.Aborted)
	}
	o.Run = &run
	return o, nil
}

// live returns the Plan.Live of one run: its metrics (Options.Metrics) and the check that stops
// it early (abort); nil when there is neither.
func (s *Session) live(l metrics.Labels, abort func(driver string, l workloads.Live) string) func(workloads.Live) string {
	var update func(workloads.Live)
	if s.opts.Metrics != nil {
		update = s.opts.Metrics(l)
	}
	if update == nil && abort == nil {
		return nil
	}
	return func(lv workloads.Live) string {
		if update != nil {
			update(lv)
		}
		if abort == nil {
			return ""
		}
		return abort(lv.Driver, lv)
	}
}

// SafetySummary says how many safety violations run had and of which kind: fencing tokens out of
// grant order (run.FencingViolations) or two holders of one lock at once (the rest).
func SafetySummary(run *results.Run) string {
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

// SkipReason is err's text without what the layers below put in front of the reason ("driver
// <name>: ", the sentinel's own text): the skip line says both already.
func SkipReason(name string, err error) string {
	s := err.Error()
	for _, p := range []string{"driver " + name + ": ", drivers.ErrUnsupported.Error() + ": "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// withFaults sets plan's timeline interval and, when there are faults, what carries them out in
// this process during the measured phase: the stalls of gen1 go to the workload, the others to
// a schedule that ends with the phase (or with ctx), resuming whatever it paused. The returned
// FaultRun records what the faults did once the run is done; runs made by several processes
// (Options.Remote) schedule their faults with it themselves.
func (s *Session) withFaults(ctx context.Context, plan *workloads.Plan) *FaultRun {
	plan.TimelineInterval = s.spec.TimelineInterval
	fr := &FaultRun{faults: s.spec.Faults}
	if len(fr.faults) == 0 {
		return fr
	}
	if runs := s.spec.rounds() * len(s.spec.Drivers); runs > 1 && !s.faultNoted {
		s.faultNoted = true
		if n := staysDown(fr.faults); n != "" {
			s.rep.Line("note: the faults run in each of the %d runs, and nothing is restored between them: %s killed in one run stays down in the next unless a restart brings it back", runs, n)
		}
	}
	if s.opts.Remote != nil {
		return fr // the generator processes measure: see Options.Remote
	}
	fr.watch = results.NewGrantWatch(len(fr.faults))
	plan.Grants = fr.watch
	plan.Stalls = fr.stalls(1)
	if sched, _ := fr.Scheduled(); len(sched) == 0 {
		return fr
	}
	sch := ServerSchedule(s.tgt)
	plan.Measure = func(start time.Time) func() {
		sctx, cancel := context.WithDeadline(ctx, start.Add(plan.Config.Duration))
		done := make(chan struct{})
		go func() {
			defer close(done)
			fr.RunSchedule(sctx, &sch, start)
		}()
		return func() { cancel(); <-done }
	}
	return fr
}

// where is the progress lines' name for a run: "[3/8]", with its round when there are several.
func (s *Session) where(st Step) string {
	w := fmt.Sprintf("[%d/%d]", st.Seq, st.Total)
	if s.spec.rounds() > 1 {
		w += fmt.Sprintf(" round %d/%d", st.Round, s.spec.rounds())
	}
	return w
}
