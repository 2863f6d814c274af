package main

import (
	"fmt"
	"os"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/spf13/pflag"
)

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
	// clock is what --start-at is read by: the deployment's TIME (bench.ClockRedis) or this machine's.
	clock string

	startAtText string
	slotEnv     string   // --task-slot-env
	stallTexts  []string // the worker's --stall AT+FOR
	stalls      []bench.Stall
	// procNets is run's --net-proc I:SPEC; after check, nets are every process's conditions
	// and runNet the run's, as bench.ProcNets makes them. fleetNet is the worker's --fleet-net,
	// the whole fleet's conditions as its result records them.
	procNets []string
	nets     []string
	runNet   string
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
	fs.StringVar(&ff.clock, "clock", bench.ClockRedis, "what --start-at is read by: 'redis', the deployment's own clock (TIME, its offset from this machine's estimated over several round trips), so that machines whose clocks disagree start together; or 'local', this machine's clock")
	fs.StringVar(&ff.output, "output", "", "write the result file to this path (default: a new file in --out)")
	fs.StringVar(&ff.arena, "check-arena", "", "shared-memory checker file of the processes on this machine (lockbench run --procs passes it)")
	_ = fs.MarkHidden("check-arena")
	fs.StringArrayVar(&ff.stallTexts, "stall", nil, "stall this process's lock holders, repeatable: AT+FOR, from the start of the measured phase (3s+2s): the workers holding a lock at AT keep it until AT+FOR, while the process and its watchdog run on (what lockbench run --fault stall:genN@AT+FOR passes to generator N)")
}

// check returns what is wrong with the fleet flags of cmd, or "": run's --procs and
// --net-proc (over net, --net); the worker's flags as they are written (a task slot, a time,
// AT+FOR). What the spec they make may be is bench.WorkerSpec.Validate's.
func (ff *fleetFlags) check(fs *pflag.FlagSet, cmd, net string) string {
	if ff.procs < 1 || ff.procs > bench.MaxProcs {
		return fmt.Sprintf("--procs %d: want 1 to %d", ff.procs, bench.MaxProcs)
	}
	var err error
	if cmd == cmdRun {
		if ff.nets, ff.runNet, err = bench.ProcNets(ff.procNets, ff.procs, net); err != nil {
			return err.Error()
		}
		return ""
	}
	if ff.slotEnv != "" {
		if fs.Changed("index") {
			return "give --index or --task-slot-env, not both"
		}
		if ff.index, err = bench.SlotIndex(ff.slotEnv, os.Getenv(ff.slotEnv), ff.procs); err != nil {
			return err.Error()
		}
	}
	if ff.startAtText != "" {
		t, err := bench.ParseStartAt(ff.startAtText)
		if err != nil {
			return fmt.Sprintf("--start-at %q: want an RFC 3339 time (2026-11-23T12:00:00Z) or Unix seconds", ff.startAtText)
		}
		ff.startAt = t
	}
	if ff.stalls, err = bench.ParseStalls(ff.stallTexts, ff.index); err != nil {
		return err.Error()
	}
	return ""
}
