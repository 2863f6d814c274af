package main

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/results"
	"github.com/spf13/pflag"
)

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
	fs.DurationVar(&ff.interval, "timeline-interval", results.DefaultTimelineInterval, "length of a timeline point, at least "+bench.MinTimelineInterval.String()+"; e.g. 100ms to see a fail-over gap")
}

// check parses the faults and has bench.FaultCheck check them against the topology lockbench
// will start (c.Topology, by c.Provider), before anything starts; c holds the rest but Faults.
// It returns a message for a usage error, or "".
func (ff *faultFlags) check(c bench.FaultCheck) string {
	if ff.interval < bench.MinTimelineInterval {
		return fmt.Sprintf("--timeline-interval %v: want at least %v", ff.interval, bench.MinTimelineInterval)
	}
	for _, s := range ff.specs {
		flt, err := faults.Parse(s)
		if err != nil {
			return "--fault: " + err.Error()
		}
		ff.faults = append(ff.faults, flt)
	}
	c.Faults, c.AllowAttached = ff.faults, ff.allowAttached
	if err := c.Check(); err != nil {
		return err.Error()
	}
	return ""
}
