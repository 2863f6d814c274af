package bench

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/lockbench/lockbench/workloads"
)

// ErrBadSpec is wrapped by every error of Spec.Validate: the spec asks for something that cannot
// run, and nothing was run.
var ErrBadSpec = errors.New("bench: bad spec")

// MaxRepeat bounds Spec.Repeat, so a typo cannot book the machine for days.
const MaxRepeat = 1000

// DefaultWorkload is the workload of a Spec that names none.
const DefaultWorkload = "contention"

// DefaultAbortAfter is the Spec.AbortAfter lockbench run and sweep give by default
// (--abort-after): how long a measured phase runs before AbortOnFail looks at it. A p99 of the
// first few hundred milliseconds is mostly connection set-up and cold caches.
const DefaultAbortAfter = time.Second

// Spec is a session of runs: every driver Repeat times, interleaved, against one target. It is a
// plain value; its zero fields take the defaults documented beside them, and those of
// workloads.Config (see workloads.Config.Fill).
type Spec struct {
	// Drivers are the drivers to compare (drivers.Parse syntax, options included), each at most
	// once. At least one.
	Drivers []string
	// Workload names the workload (workloads.Names); "" is DefaultWorkload.
	Workload string
	// Config is the workload's configuration, the same for every run.
	Config workloads.Config
	// Lease is the lock lease; 0 uses each driver's default.
	Lease time.Duration
	// Repeat is how many rounds run, 1 to MaxRepeat; 0 is 1.
	Repeat int
	// Baseline is the driver the summary compares with, one of Drivers; "" is the first.
	Baseline string
	// Topology labels the runs (results.Run.TopologySpec), e.g. "single" or "masters:3".
	Topology string
	// Net labels the network conditions of the runs (results.Run.Net); "" for none.
	Net string
	// Thresholds are checked on the runs once they are done (Result.Thresholds); every driver
	// they name must be one of Drivers.
	Thresholds []thresholds.Threshold
	// AbortOnFail stops a measured phase once a threshold that can be checked live fails, after
	// AbortAfter of it; no further run starts (Result.Aborted).
	AbortOnFail bool
	AbortAfter  time.Duration
	// Faults run during every measured phase; validated against the target by the caller
	// (faults.Validate), which knows how it was started.
	Faults []faults.Fault
	// TimelineInterval is the length of a timeline point; 0 is results.DefaultTimelineInterval.
	TimelineInterval time.Duration
	// StallThreshold: a master that leaves a PING unanswered this long during a measured phase
	// stalled, which fails the run unless AllowStalls or Faults; 0 turns the check off.
	StallThreshold time.Duration
	AllowStalls    bool
}

// rounds is s.Repeat with its default.
func (s Spec) rounds() int { return max(s.Repeat, 1) }

// workload is s.Workload with its default.
func (s Spec) workload() string {
	if s.Workload == "" {
		return DefaultWorkload
	}
	return s.Workload
}

// baseline is s.Baseline with its default.
func (s Spec) baseline() string {
	if s.Baseline == "" && len(s.Drivers) > 0 {
		return s.Drivers[0]
	}
	return s.Baseline
}

// stallsBounded says whether post-run reads of a stalled server are skipped rather than waited
// for: when a stall fails the run anyway (no faults, no AllowStalls). A stopped server made each
// read (the servers' counters, the audit, the cleaning) wait out its own 5 s timeout, one after
// the other: a 2 s phase took 18 to 24 s.
func (s Spec) stallsBounded() bool {
	return s.StallThreshold > 0 && !s.AllowStalls && len(s.Faults) == 0
}

// badSpec is an error of Validate: its text is the complaint alone, as the command line shows it;
// it wraps ErrBadSpec and the cause, if any.
type badSpec struct {
	msg   string
	cause error
}

func (e *badSpec) Error() string { return e.msg }

func (e *badSpec) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrBadSpec}
	}
	return []error{ErrBadSpec, e.cause}
}

func bad(format string, a ...any) error { return &badSpec{msg: fmt.Sprintf(format, a...)} }

// Validate returns what is wrong with s, as an error wrapping ErrBadSpec (and, for a
// configuration the workload refuses, workloads.ErrBadConfig), or nil. The messages name the
// lockbench run flags that set each field.
func (s Spec) Validate() error {
	cfg := s.Config
	cfg.Fill()
	switch {
	case cfg.Concurrency < 1:
		return bad("--concurrency %d must be at least 1", s.Config.Concurrency)
	case cfg.Keys < 1:
		return bad("--keys %d must be at least 1", s.Config.Keys)
	case cfg.Duration <= 0:
		return bad("--duration %v must be positive", s.Config.Duration)
	case s.Config.Warmup < -1:
		return bad("--warmup %v must not be negative", s.Config.Warmup)
	case s.Lease < 0:
		return bad("--lease %v must not be negative", s.Lease)
	case !(s.Config.ReadRatio == -1 || s.Config.ReadRatio >= 0 && s.Config.ReadRatio <= 1): // NaN too
		return bad("--read-ratio %v: want 0 to 1", s.Config.ReadRatio)
	case s.Config.Fanout != 0 && (s.Config.Fanout < 1 || s.Config.Fanout > min(cfg.Keys, workloads.MaxFanout)):
		return bad("--fanout %d: want 1 to %d (--keys %d, at most %d)", s.Config.Fanout, min(cfg.Keys, workloads.MaxFanout), cfg.Keys, workloads.MaxFanout)
	case s.Repeat < 0 || s.Repeat > MaxRepeat:
		return bad("--repeat %d: want 1 to %d", s.Repeat, MaxRepeat)
	case strings.TrimSpace(cfg.KeyPrefix) == "":
		return bad("--key-prefix must not be empty: it keeps lockbench's keys apart from yours")
	case len(s.Drivers) == 0:
		return bad("--driver needs at least one driver")
	}
	seen := make(map[string]bool)
	for _, d := range s.Drivers {
		if err := drivers.CheckTopology(d, s.Topology); err != nil {
			return bad("--driver: %v", err)
		}
		if seen[d] {
			return bad("--driver lists %s twice; use --repeat to run a driver more than once", d)
		}
		seen[d] = true
	}
	if s.Baseline != "" && !seen[s.Baseline] {
		return bad("--baseline %q is not one of --driver %s", s.Baseline, strings.Join(s.Drivers, ","))
	}
	w, err := workloads.Get(s.workload())
	if err != nil {
		return bad("--workload: %v", err)
	}
	if cfg.Depth < 1 || cfg.Depth > workloads.MaxDepth {
		return bad("--depth %d: want 1 to %d", s.Config.Depth, workloads.MaxDepth)
	}
	for _, th := range s.Thresholds {
		for _, d := range th.Drivers() {
			if !seen[d] {
				return bad("--threshold %q names driver %s, which is not in --driver %s", th.String(), d, strings.Join(s.Drivers, ","))
			}
		}
	}
	if s.TimelineInterval < 0 {
		return bad("--timeline-interval %v must not be negative", s.TimelineInterval)
	}
	if s.StallThreshold < 0 {
		return bad("--stall-threshold %v must not be negative", s.StallThreshold)
	}
	if s.AbortAfter < 0 {
		return bad("--abort-after %v must not be negative", s.AbortAfter)
	}
	if err := workloads.CheckConfig(w, s.Config); err != nil {
		return &badSpec{msg: err.Error(), cause: err}
	}
	return nil
}
