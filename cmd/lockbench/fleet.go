package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/netem"
	"github.com/spf13/pflag"
)

// maxProcs bounds --procs and merge's --expect.
const maxProcs = bench.MaxProcs

// clockRedis is the worker's --clock by default: its --start-at is read by the deployment's TIME.
const clockRedis = bench.ClockRedis

// fleetFlags are run's --procs and the worker's own flags.
type fleetFlags struct {
	// procs: for run, the generator processes to start (1: this one); for worker, how many
	// processes the run has.
	procs int
	// The worker's place in the run, its start time, result file and checker arena.
	index   int
	startAt time.Time
	output  string
	arena   string
	// clock is what --start-at is read by: the deployment's TIME (clockRedis) or this machine's.
	clock string

	startAtText string
	slotEnv     string   // --task-slot-env
	stallTexts  []string // the worker's --stall AT+FOR
	stalls      []bench.Stall
	// procNets is run's --net-proc I:SPEC, procNet the conditions it gives process I (over
	// --net); fleetNet is the worker's --fleet-net, the whole fleet's conditions as its result
	// records them (see netOfFleet).
	procNets []string
	procNet  map[int]netem.Conditions
	fleetNet string
}

// addFleetFlags adds --procs to run, and the worker's flags to worker.
func addFleetFlags(fs *pflag.FlagSet, ff *fleetFlags, cmd string) {
	if cmd == cmdRun {
		fs.IntVar(&ff.procs, "procs", 1, "generator processes: lockbench starts this many 'lockbench worker' processes of itself, each with its own driver clients and --concurrency workers, all starting at one time, and merges their histograms; the safety checker spans them (shared memory). 1: this process alone")
		fs.StringArrayVar(&ff.procNets, "net-proc", nil, "network conditions of one generator process, over --net, repeatable: INDEX:SPEC, SPEC as for --net (e.g. --procs 2 --net-proc 1:latency=5ms: process 1 is 10 ms of round trip away, process 0 direct); the result names every process's conditions")
		return
	}
	fs.StringVar(&ff.fleetNet, "fleet-net", "", "the network conditions of the whole run, as its result records them (lockbench run --procs passes it with --net-proc)")
	_ = fs.MarkHidden("fleet-net")
	fs.IntVar(&ff.procs, "procs", 1, "how many generator processes the run has, here and elsewhere (this is one of them)")
	fs.IntVar(&ff.index, "index", 0, "this process's index, 0 to --procs - 1 (in a Kubernetes Indexed Job: $JOB_COMPLETION_INDEX); index 0 also measures the servers (commands, CPU)")
	fs.StringVar(&ff.slotEnv, "task-slot-env", "", "take the index from this environment variable, which holds a 1-based task slot (Docker Swarm: set it to {{.Task.Slot}} in the service's environment; index = slot - 1), instead of --index")
	fs.StringVar(&ff.startAtText, "start-at", "", "common start time, RFC 3339 (2026-11-23T12:00:00Z) or Unix seconds: the worker connects, then waits for it before its warm-up (default: at once)")
	fs.StringVar(&ff.clock, "clock", clockRedis, "what --start-at is read by: 'redis', the deployment's own clock (TIME, its offset from this machine's estimated over several round trips), so that machines whose clocks disagree start together; or 'local', this machine's clock")
	fs.StringVar(&ff.output, "output", "", "write the result file to this path (default: a new file in --out)")
	fs.StringVar(&ff.arena, "check-arena", "", "shared-memory checker file of the processes on this machine (lockbench run --procs passes it)")
	_ = fs.MarkHidden("check-arena")
	fs.StringArrayVar(&ff.stallTexts, "stall", nil, "stall this process's lock holders, repeatable: AT+FOR, from the start of the measured phase (3s+2s): the workers holding a lock at AT keep it until AT+FOR, while the process and its watchdog run on (what lockbench run --fault stall:genN@AT+FOR passes to generator N)")
}

// check returns what is wrong with the fleet flags of cmd, or "": run's --procs and
// --net-proc; the worker's flags as they are written (a task slot, a time, AT+FOR). What the
// spec they make may be is bench.WorkerSpec.Validate's.
func (ff *fleetFlags) check(fs *pflag.FlagSet, cmd string) string {
	if ff.procs < 1 || ff.procs > maxProcs {
		return fmt.Sprintf("--procs %d: want 1 to %d", ff.procs, maxProcs)
	}
	if cmd == cmdRun {
		return ff.checkProcNets()
	}
	if ff.slotEnv != "" {
		// Swarm expands templates in a service's environment, not in its command, and counts
		// slots from 1.
		if fs.Changed("index") {
			return "give --index or --task-slot-env, not both"
		}
		v := os.Getenv(ff.slotEnv)
		slot, err := strconv.Atoi(v)
		if err != nil || slot < 1 || slot > ff.procs {
			return fmt.Sprintf("--task-slot-env %s: the variable holds %q; want a task slot, 1 to %d (--procs %d)", ff.slotEnv, v, ff.procs, ff.procs)
		}
		ff.index = slot - 1
	}
	if ff.startAtText != "" {
		t, err := bench.ParseStartAt(ff.startAtText)
		if err != nil {
			return fmt.Sprintf("--start-at %q: want an RFC 3339 time (2026-11-23T12:00:00Z) or Unix seconds", ff.startAtText)
		}
		ff.startAt = t
	}
	for _, v := range ff.stallTexts {
		flt, err := faults.Parse(fmt.Sprintf("%s:%s%d@%s", faults.Stall, faults.RoleGen, ff.index+1, v))
		if err != nil {
			return fmt.Sprintf("--stall %q: want AT+FOR, e.g. 3s+2s: %v", v, err)
		}
		ff.stalls = append(ff.stalls, bench.Stall{At: flt.At, For: flt.For})
	}
	return ""
}

// checkProcNets parses run's --net-proc into ff.procNet, and returns the message for a bad one,
// or "".
func (ff *fleetFlags) checkProcNets() string {
	if len(ff.procNets) == 0 {
		return ""
	}
	if ff.procs < 2 {
		return "--net-proc gives one of several generator processes its own network conditions: give --procs 2 or more"
	}
	ff.procNet = make(map[int]netem.Conditions, len(ff.procNets))
	for _, v := range ff.procNets {
		idx, spec, ok := strings.Cut(v, ":")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil {
			return fmt.Sprintf("--net-proc %q: want INDEX:SPEC, e.g. 1:latency=5ms", v)
		}
		if i < 0 || i >= ff.procs {
			return fmt.Sprintf("--net-proc %q: process %d, want 0 to %d (--procs %d)", v, i, ff.procs-1, ff.procs)
		}
		if _, dup := ff.procNet[i]; dup {
			return fmt.Sprintf("--net-proc: process %d given twice", i)
		}
		c, err := netem.Parse(spec)
		if err != nil {
			return fmt.Sprintf("--net-proc %q: %s", v, strings.TrimPrefix(err.Error(), netem.ErrSpec.Error()+": "))
		}
		ff.procNet[i] = c
	}
	return ""
}

// netOfProc is the conditions generator process i puts on its connections: its --net-proc, else
// net (--net); "" for none.
func (ff *fleetFlags) netOfProc(i int, net string) string {
	if c, ok := ff.procNet[i]; ok {
		return c.String()
	}
	return net
}

// netOfFleet is the network conditions of a run as its result records them (results.Run.Net):
// net (--net) alone, or with --net-proc every process's, "0: none; 1: latency=5ms".
func (ff *fleetFlags) netOfFleet(net string) string {
	if len(ff.procNet) == 0 {
		return net
	}
	parts := make([]string, ff.procs)
	for i := range parts {
		n := ff.netOfProc(i, net)
		if n == "" {
			n = "none"
		}
		parts[i] = fmt.Sprintf("%d: %s", i, n)
	}
	return strings.Join(parts, "; ")
}
