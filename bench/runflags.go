package bench

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/pin"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/spf13/pflag"
)

// The flag groups of lockbench run and sweep that set a Spec's fields or the checks before it
// runs. Each registers its flags, checks itself, and holds what the Spec takes. Their errors
// wrap ErrBadSpec and name the flag. A group is used by one goroutine.

// AbortFlags are --abort-on-fail and --abort-after (Spec.AbortOnFail, Spec.AbortAfter).
type AbortFlags struct {
	On    bool
	After time.Duration
}

// Register adds the flags to fs, for lockbench sweep when sweep is set, else for run, whose
// failed thresholds exit with thresholdsExit.
func (a *AbortFlags) Register(fs *pflag.FlagSet, sweep bool, thresholdsExit int) {
	what := "a --threshold that can be checked while measuring (absolute: latencies, throughput, errors, violations; ratios are checked at the end) fails: the run stops, its partial result is written (marked incomplete, with the reason) and no further run starts; exit " + fmt.Sprint(thresholdsExit)
	if sweep {
		what = "a step is already past the --slo: the step stops (verdict over, the time saved in the summary) and the sweep goes on as after any step over the SLO"
	}
	fs.BoolVar(&a.On, "abort-on-fail", false, "check every --timeline-interval once --abort-after has passed, and stop when "+what)
	fs.DurationVar(&a.After, "abort-after", DefaultAbortAfter, "with --abort-on-fail: how long each measured phase runs before it is checked")
}

// Check returns what is wrong with the flags of fs, or nil: run (sweep unset) checks ths, its
// thresholds, while measuring, in one process (procs). A negative --abort-after is
// Spec.Validate's.
func (a *AbortFlags) Check(fs *pflag.FlagSet, sweep bool, ths []thresholds.Threshold, procs int) error {
	switch {
	case !a.On && fs.Changed("abort-after"):
		return bad("--abort-after needs --abort-on-fail")
	case !a.On:
		return nil
	case sweep:
		return nil // the SLO, always given or defaulted
	case len(ths) == 0:
		return bad("--abort-on-fail needs a --threshold to check (e.g. --threshold 'p99<5ms')")
	case procs > 1:
		return bad("--abort-on-fail is not available with --procs: each process sees only its share of the run (its thresholds are checked on the merged result at the end)")
	}
	for _, th := range ths {
		if th.CanAbort() {
			return nil
		}
	}
	return bad("--abort-on-fail: none of the --threshold can be checked while measuring (ratios compare drivers that run one after the other; commands, CPU and driver counts are read at the end)")
}

// StallFlags are --stall-threshold and --allow-stalls (Spec.StallThreshold, Spec.AllowStalls),
// which Spec.Validate checks.
type StallFlags struct {
	Threshold time.Duration
	Allow     bool
}

// Register adds the flags to fs.
func (s *StallFlags) Register(fs *pflag.FlagSet) {
	fs.DurationVar(&s.Threshold, "stall-threshold", DefaultStallThreshold, "a master that leaves lockbench's PING unanswered this long during a measured phase stalled: the run is marked and fails (exit 1); 0 turns the check off")
	fs.BoolVar(&s.Allow, "allow-stalls", false, "report stalls (--stall-threshold) without failing the run, for scenarios that stall the server on purpose by other means than --fault")
}

// FaultFlags are run's --fault, --allow-faults-on-attached and --timeline-interval
// (Spec.Faults, Spec.TimelineInterval, FaultCheck.AllowAttached).
type FaultFlags struct {
	specs         []string
	Faults        []faults.Fault // after Check
	AllowAttached bool
	Interval      time.Duration
}

// FaultHelp is --fault's help: the faults, their syntax and where each can happen.
const FaultHelp = "fault during every measured phase, repeatable: ACTION[:NODE]@AT[+FOR], AT from the start of the measured phase: " +
	"kill:master@3s, pause:master@3s+2s (SIGSTOP, SIGCONT 2s later), restart:master@8s (the server kill:master killed, same port and config), " +
	"kill:replica1@3s, kill:sentinel2@3s, kill:node3@3s (the Nth node as the topology lists them), failover@3s (SENTINEL FAILOVER; on cluster CLUSTER FAILOVER on replica1, or failover:replica2@3s); " +
	"kill, pause and restart only on topologies lockbench started natively; partition:master@3s+2s cuts the clients off from the node (needs --net; --net latency=0 adds no delay); " +
	"isolate:master@3s+8s cuts the master off from its replicas and sentinels while the clients still reach it (--provider docker --topology sentinel); " +
	"client faults on lockbench's generator processes (genN, 1-based; see docs/client-faults.md): pause-client:gen2@3s+2s stops generator 2 (SIGSTOP, or docker pause; its watchdog stops too) and resumes it 2s later (needs --procs 2 or more, or --generators docker), " +
	"stall:gen1@3s+2s keeps generator 1's workers that hold a lock at 3s inside their critical section until 5s while the process and its watchdog run on; with faults, errors are the expected effect and do not fail the run, violations and failed faults do"

// Register adds the flags to fs.
func (ff *FaultFlags) Register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&ff.specs, "fault", nil, FaultHelp)
	fs.BoolVar(&ff.AllowAttached, "allow-faults-on-attached", false, "allow --fault on a deployment given by --addr (lockbench can then only ask for a fail-over: it has no processes to kill or pause)")
	fs.DurationVar(&ff.Interval, "timeline-interval", results.DefaultTimelineInterval, "length of a timeline point, at least "+MinTimelineInterval.String()+"; e.g. 100ms to see a fail-over gap")
}

// Check parses the faults into Faults and has c check them against the topology lockbench will
// start (c.Topology, by c.Provider), before anything starts; c holds the rest but the faults
// and AllowAttached.
func (ff *FaultFlags) Check(c FaultCheck) error {
	if ff.Interval < MinTimelineInterval {
		return bad("--timeline-interval %v: want at least %v", ff.Interval, MinTimelineInterval)
	}
	for _, s := range ff.specs {
		flt, err := faults.Parse(s)
		if err != nil {
			return bad("--fault: %v", err)
		}
		ff.Faults = append(ff.Faults, flt)
	}
	c.Faults, c.AllowAttached = ff.Faults, ff.AllowAttached
	return c.Check()
}

// PinFlags are --pin, --server-cpus and --client-cpus (run and sweep): where the servers
// lockbench starts and lockbench itself run. Check has PlaceRequest parse the lists and decide
// the placement; the servers are placed as they start (target.Spec's Native.CPUs), the caller
// places its own process (pin.Self with Client).
type PinFlags struct {
	mode                   string
	serverList, clientList string
	// After Check: the CPUs of the servers and of lockbench, and the placement the result
	// records (nil when nothing is placed).
	Server, Client pin.CPUs
	Placement      *results.Placement
	// Referee, after Check, is where a native referee runs (RefereeCPUs); empty: not placed.
	Referee pin.CPUs
}

// Register adds the flags to fs.
func (p *PinFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&p.mode, "pin", PinAuto, "CPU placement of the servers lockbench starts and of lockbench itself: auto (on a machine with 2 or more CPUs, the servers on the highest-numbered CPUs — one per master, at most half — and lockbench with its generator processes on the rest, GOMAXPROCS set to their count) or off (the scheduler decides; client and server then compete for the same cores)")
	fs.StringVar(&p.serverList, "server-cpus", "", "CPUs for the redis-server processes lockbench starts (taskset list: 1, 2-3, 1,3); not with --addr, whose servers lockbench does not own")
	fs.StringVar(&p.clientList, "client-cpus", "", "CPUs for lockbench and its generator processes (taskset list); GOMAXPROCS is set to their count")
}

// Check parses the lists of fs and decides the placement of spec's servers (none of them
// lockbench's when attached) with PlaceRequest.
func (p *PinFlags) Check(fs *pflag.FlagSet, spec compose.Spec, attached bool) error {
	r := PlaceRequest{Mode: p.mode, Server: p.serverList, Client: p.clientList, Given: fs.Changed}
	var err error
	if p.Server, p.Client, p.Placement, err = r.Resolve(spec, attached); err != nil {
		return err
	}
	// Now, before lockbench places itself: afterwards Available is the client's CPUs alone.
	avail, err := pin.Available()
	if err != nil {
		return &badSpec{msg: err.Error(), cause: err}
	}
	p.Referee = RefereeCPUs(p.Server, p.Client, avail)
	return nil
}
