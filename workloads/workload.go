package workloads

import (
	"context"
	"fmt"
	"sort"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Workload decides what each locking cycle does. Implementations are safe for concurrent use.
type Workload interface {
	// Name is the name users pass to --workload.
	Name() string
	// Needs is the lock kinds a driver must support to run it.
	Needs() drivers.Kind
	// Start prepares one run: key names and a safety checker shared by all workers.
	Start(cfg *Config) Instance
}

// Instance is one run of a workload. It is safe for concurrent use.
type Instance interface {
	// NewCycler returns the cycle of worker id, driving w. The pacer calls it from one goroutine.
	// Releases use release, which outlives the phase so that a lock held when the phase ends is
	// still given back; the pacer cancels it a grace period after the phase.
	NewCycler(id int, w drivers.Worker, release context.Context) Cycler
	// Violations returns the safety violations of every kind the checkers have seen, warm-up
	// included: two holders at once, and what a SafetyReporter breaks down further.
	Violations() int64
}

// Safety is what an instance's checkers saw beyond the total of Instance.Violations, warm-up
// included like it. Run copies it into results.Run. It is a plain value and safe for concurrent
// use.
type Safety struct {
	// FencingViolations is the part of Violations that were fencing tokens out of grant order
	// (see FenceChecker); they are not counted as errors.
	FencingViolations int64
	// MaxReaders is the most read holds seen inside one key at once (see RWChecker).
	MaxReaders int64
}

// SafetyReporter is an Instance whose checkers report more than a total of violations: fencing
// violations (contention on a fenced lock driver), concurrent readers (rw). Instances without
// one leave those result fields at 0. Implementations are safe for concurrent use.
type SafetyReporter interface {
	// Safety returns what the checkers have seen so far.
	Safety() Safety
}

// Cycler performs one locking cycle per call. Not safe for concurrent use.
type Cycler interface {
	// Cycle takes, holds and releases; it records into rec when rec is not nil (warm-up passes
	// nil). It returns ctx.Err() once ctx ends, and nil after a failed cycle it has counted; any
	// other error, also counted, means the worker cannot go on, and the pacer stops it.
	// It never returns holding a lock: when ctx ends mid-hold it cuts the hold short and releases.
	Cycle(ctx context.Context, rec *results.Recorder) error
}

// errLacksKind ends the cycles of a worker that lacks the interface of the kind its workload
// needs; see lacking.
var errLacksKind = fmt.Errorf("%w: the driver's worker lacks the lock kind's interface", drivers.ErrUnsupported)

// lacking returns the cycler of a worker that lacks the interface of kind, which happens when its
// driver lists kind but was opened without it in drivers.Config.Needs. Each of its cycles counts
// one error "unsupported_<kind>" and stops the worker, so the run ends at once and says why
// instead of locking the wrong way.
func lacking(kind drivers.Kind) Cycler { return lackingCycler{"unsupported_" + kind.String()} }

type lackingCycler struct{ errorKind string }

func (c lackingCycler) Cycle(_ context.Context, rec *results.Recorder) error {
	countError(rec, c.errorKind, nil)
	return errLacksKind
}

var registry = map[string]Workload{}

// register adds w; called from init in each workload's file.
func register(w Workload) { registry[w.Name()] = w }

// Get returns the workload called name.
func Get(name string) (Workload, error) {
	w, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("%w: unknown workload %q (known: %v)", ErrBadConfig, name, Names())
	}
	return w, nil
}

// Names lists the workloads, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ConfigChecker is a Workload with requirements of its own on the Config (longhold needs a
// hold). Implementations are safe for concurrent use.
type ConfigChecker interface {
	// CheckConfig returns an error wrapping ErrBadConfig when cfg, filled, cannot run the
	// workload.
	CheckConfig(cfg *Config) error
}

// CheckConfig fills a copy of cfg with defaults and validates it for w: the general checks,
// then w's own (see ConfigChecker). Errors wrap ErrBadConfig.
func CheckConfig(w Workload, cfg Config) error {
	cfg.Fill()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Resource != nil && !WritesResource(w) {
		return fmt.Errorf("%w: workload %s does not write to a protected resource: use workload contention", ErrBadConfig, w.Name())
	}
	if cc, ok := w.(ConfigChecker); ok {
		return cc.CheckConfig(&cfg)
	}
	return nil
}
