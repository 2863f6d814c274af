package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/target"
)

// MinTimelineInterval bounds Spec.TimelineInterval from below where a caller takes it from a
// user (lockbench run's --timeline-interval): shorter points cost a histogram merge each and show
// nothing a fail-over gap of tens of milliseconds does not.
const MinTimelineInterval = 10 * time.Millisecond

// FaultCheck is what the faults of a session (lockbench run's --fault) are checked against
// before the topology starts (Check) and once attached to a deployment (CheckAttached).
type FaultCheck struct {
	// Faults are the faults (faults.Parse); none passes every check.
	Faults []faults.Fault
	// Runs is how many runs the session has: drivers × rounds.
	Runs int
	// Attached says the deployment is the user's (--addr); AllowAttached lets server faults
	// (fail-overs only: lockbench has no processes to signal) run there.
	Attached, AllowAttached bool
	// Topology and Provider are the topology lockbench starts and how (target.ProviderNative, …).
	Topology compose.Spec
	Provider string
	// Run is the session's side of the layout: Procs, Duration, Containers, Partition.
	Run faults.Layout
}

// Check checks the faults against the topology lockbench will start, before anything starts;
// faults on an attached deployment are checked once attached (CheckAttached). The error wraps
// ErrBadSpec and names --fault.
func (c FaultCheck) Check() error {
	if len(c.Faults) == 0 {
		return nil
	}
	if c.Runs > 1 && slices.ContainsFunc(c.Faults, func(x faults.Fault) bool { return x.Action == faults.Isolate }) {
		// The first run's isolation ends in a fail-over: in the next, the node it names is a
		// replica, and isolating it would show nothing while looking like the same fault.
		return bad("--fault isolate with %d runs (--driver × --repeat): after the first, the isolated master has been replaced by a promoted replica and cannot be isolated again; run one driver and one round per invocation", c.Runs)
	}
	serverFaults := slices.ContainsFunc(c.Faults, func(x faults.Fault) bool { return !x.Action.Client() })
	if c.Attached && serverFaults {
		if !c.AllowAttached {
			return bad("--fault on an attached deployment (--addr) is refused: it would kill, pause or fail over servers lockbench did not start; add --allow-faults-on-attached to ask for fail-overs there anyway (the client faults pause-client and stall act on lockbench's own processes, and need no leave)")
		}
		return nil // checked against the deployment once attached
	}
	l := faults.LayoutFor(c.Topology)
	l.Signals = c.Provider == target.ProviderNative
	l.Isolate = c.Provider == target.ProviderDocker && c.Topology.Kind == compose.KindSentinel
	if !l.Signals {
		l.NoSignals = "--provider " + c.Provider + " is not supported for kill, pause and restart yet (use --provider native)"
	}
	return c.validate(l)
}

// CheckAttached checks the faults against the deployment t lockbench attached to, before
// anything is measured; on a topology lockbench started (Check did) it passes. The error wraps
// ErrBadSpec and names --fault.
func (c FaultCheck) CheckAttached(t *target.Target) error {
	if len(c.Faults) == 0 || !t.Attached() {
		return nil
	}
	l := faults.LayoutOf(t.Description())
	l.NoSignals = "lockbench attached to this deployment (--addr) and has no processes to signal"
	return c.validate(l)
}

// validate checks the faults against the topology's layout l with the session's side of it.
func (c FaultCheck) validate(l faults.Layout) error {
	l.Procs, l.Duration, l.Containers, l.Partition = c.Run.Procs, c.Run.Duration, c.Run.Containers, c.Run.Partition
	if err := faults.Validate(c.Faults, l); err != nil {
		return &badSpec{msg: fmt.Sprintf("--fault: %v", err), cause: err}
	}
	return nil
}
