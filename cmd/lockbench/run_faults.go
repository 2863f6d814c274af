package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
	"github.com/spf13/pflag"
)

// minTimelineInterval bounds --timeline-interval: shorter points cost a histogram merge each
// and show nothing a fail-over gap of tens of milliseconds does not.
const minTimelineInterval = 10 * time.Millisecond

// faultFlags are run's --fault, --allow-faults-on-attached and --timeline-interval.
type faultFlags struct {
	specs         []string
	faults        []faults.Fault
	allowAttached bool
	interval      time.Duration
}

const faultHelp = "fault during every measured phase, repeatable: ACTION[:NODE]@AT[+FOR], AT from the start of the measured phase: " +
	"kill:master@3s, pause:master@3s+2s (SIGSTOP, SIGCONT 2s later), restart:master@8s (the server kill:master killed, same port and config), " +
	"kill:replica1@3s, kill:sentinel2@3s, kill:node3@3s (the Nth node as the topology lists them), failover@3s (SENTINEL FAILOVER; on cluster CLUSTER FAILOVER on replica1, or failover:replica2@3s); " +
	"kill, pause and restart only on topologies lockbench started natively; partition:master@3s+2s cuts the clients off from the node (needs --net; --net latency=0 adds no delay); " +
	"isolate:master@3s+8s cuts the master off from its replicas and sentinels while the clients still reach it (--provider docker --topology sentinel); " +
	"client faults on lockbench's generator processes (genN, 1-based; see docs/client-faults.md): pause-client:gen2@3s+2s stops generator 2 (SIGSTOP, or docker pause; its watchdog stops too) and resumes it 2s later (needs --procs 2 or more, or --generators docker), " +
	"stall:gen1@3s+2s keeps generator 1's workers that hold a lock at 3s inside their critical section until 5s while the process and its watchdog run on; with faults, errors are the expected effect and do not fail the run, violations and failed faults do"

func addFaultFlags(fs *pflag.FlagSet, ff *faultFlags) {
	fs.StringArrayVar(&ff.specs, "fault", nil, faultHelp)
	fs.BoolVar(&ff.allowAttached, "allow-faults-on-attached", false, "allow --fault on a deployment given by --addr (lockbench can then only ask for a fail-over: it has no processes to kill or pause)")
	fs.DurationVar(&ff.interval, "timeline-interval", results.DefaultTimelineInterval, "length of a timeline point, at least "+minTimelineInterval.String()+"; e.g. 100ms to see a fail-over gap")
}

// check parses the faults and checks them against the topology lockbench will start (spec,
// by provider), before anything starts; faults on an attached deployment are checked once
// attached (checkAttached). runs is --driver × --repeat; run holds the run's side of the
// layout: Procs, Duration, Containers, Partition. It returns a message for a usage error, or "".
func (ff *faultFlags) check(runs int, attached bool, spec compose.Spec, provider string, run faults.Layout) string {
	if ff.interval < minTimelineInterval {
		return fmt.Sprintf("--timeline-interval %v: want at least %v", ff.interval, minTimelineInterval)
	}
	for _, s := range ff.specs {
		flt, err := faults.Parse(s)
		if err != nil {
			return "--fault: " + err.Error()
		}
		ff.faults = append(ff.faults, flt)
	}
	if len(ff.faults) == 0 {
		return ""
	}
	if runs > 1 && slices.ContainsFunc(ff.faults, func(x faults.Fault) bool { return x.Action == faults.Isolate }) {
		// The first run's isolation ends in a fail-over: in the next, the node it names is a
		// replica, and isolating it would show nothing while looking like the same fault.
		return fmt.Sprintf("--fault isolate with %d runs (--driver × --repeat): after the first, the isolated master has been replaced by a promoted replica and cannot be isolated again; run one driver and one round per invocation", runs)
	}
	serverFaults := slices.ContainsFunc(ff.faults, func(x faults.Fault) bool { return !x.Action.Client() })
	if attached && serverFaults {
		if !ff.allowAttached {
			return "--fault on an attached deployment (--addr) is refused: it would kill, pause or fail over servers lockbench did not start; add --allow-faults-on-attached to ask for fail-overs there anyway (the client faults pause-client and stall act on lockbench's own processes, and need no leave)"
		}
		return "" // checked against the deployment once attached
	}
	l := faults.LayoutFor(spec)
	l.Signals = provider == target.ProviderNative
	l.Isolate = provider == target.ProviderDocker && spec.Kind == compose.KindSentinel
	if !l.Signals {
		l.NoSignals = "--provider " + provider + " is not supported for kill, pause and restart yet (use --provider native)"
	}
	return ff.validate(l, run)
}

// checkAttached checks the faults against the deployment t lockbench attached to, before
// anything is measured (run as for check). It returns a message for a usage error, or "".
func (ff *faultFlags) checkAttached(t *target.Target, run faults.Layout) string {
	if len(ff.faults) == 0 || !t.Attached() {
		return ""
	}
	l := faults.LayoutOf(t.Description())
	l.NoSignals = "lockbench attached to this deployment (--addr) and has no processes to signal"
	return ff.validate(l, run)
}

// validate checks the faults against the topology's layout l with the run's side of it.
func (ff *faultFlags) validate(l, run faults.Layout) string {
	l.Procs, l.Duration, l.Containers, l.Partition = run.Procs, run.Duration, run.Containers, run.Partition
	if err := faults.Validate(ff.faults, l); err != nil {
		return "--fault: " + err.Error()
	}
	return ""
}
