// Package bench runs what lockbench run runs, as a library: a session of runs of several drivers,
// interleaved over rounds, against one target (package target), each from a clean keyspace with
// a fresh client, audited afterwards, with faults, stall detection and thresholds. Outcomes are
// values (Result, Outcome); progress goes to a Reporter. Process-wide effects (CPU placement,
// signals, exit codes) are the caller's.
package bench

import (
	"context"

	"github.com/lockbench/lockbench/keyspace"
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
		s.opts.RunHere = opts.Referee.runHere(s.rep)
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

// declared are the key shapes the session's external adapters declared, as the preflight of an
// attached deployment recorded them (CheckAttached: results.Cleanup.Declared); none otherwise.
func (s *Session) declared() []keyspace.Declared { return declaredOf(s.opts.File.Cleanup) }

// declaredOf reads back the declared key patterns a cleanup record holds; they were checked
// when the hello was read.
func declaredOf(c *results.Cleanup) []keyspace.Declared {
	if c == nil {
		return nil
	}
	ds, _ := keyspace.ParseDeclaredList(c.Declared)
	return ds
}

// keyPrefix is the prefix of the session's lock names, with its default.
func (s *Session) keyPrefix() string {
	cfg := s.spec.Config
	cfg.Fill()
	return cfg.KeyPrefix
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
