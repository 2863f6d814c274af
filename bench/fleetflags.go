package bench

import (
	"os"
	"time"

	"github.com/spf13/pflag"
)

// FleetFlags are lockbench run's --procs and --net-proc, and lockbench worker's own flags: its
// place in the run, its common start, its result file, its checker arena, its stalls and the
// whole run's network conditions. Check reads them as they are written; what the spec they make
// may be is WorkerSpec.Validate's. A FleetFlags is used by one goroutine.
type FleetFlags struct {
	// Procs is, for run, the generator processes to start (1: this one); for a worker, how many
	// processes the run has.
	Procs int
	// The worker's place in the run, its start time (after Check), result file and checker arena.
	Index   int
	StartAt time.Time
	Output  string
	Arena   string
	// Clock is what --start-at is read by: the deployment's TIME (ClockRedis) or this machine's.
	Clock string
	// Stalls are the worker's --stall, after Check.
	Stalls []Stall
	// Nets are every process's conditions and RunNet the run's, as ProcNets makes them from
	// run's --net-proc, after Check; FleetNet is the worker's --fleet-net, the whole fleet's
	// conditions as its result records them.
	Nets     []string
	RunNet   string
	FleetNet string

	startAtText string
	slotEnv     string   // --task-slot-env
	stallTexts  []string // the worker's --stall AT+FOR
	procNets    []string // run's --net-proc I:SPEC
}

// Register adds --procs and --net-proc to fs for lockbench run (worker false), or the worker's
// flags for lockbench worker.
func (ff *FleetFlags) Register(fs *pflag.FlagSet, worker bool) {
	if !worker {
		fs.IntVar(&ff.Procs, "procs", 1, "generator processes: lockbench starts this many 'lockbench worker' processes of itself, each with its own driver clients and --concurrency workers, all starting at one time, and merges their histograms; the safety checker spans them (shared memory). 1: this process alone")
		fs.StringArrayVar(&ff.procNets, "net-proc", nil, "network conditions of one generator process, over --net, repeatable: INDEX:SPEC, SPEC as for --net (e.g. --procs 2 --net-proc 1:latency=5ms: process 1 is 10 ms of round trip away, process 0 direct); the result names every process's conditions")
		return
	}
	fs.StringVar(&ff.FleetNet, "fleet-net", "", "the network conditions of the whole run, as its result records them (lockbench run --procs passes it with --net-proc)")
	_ = fs.MarkHidden("fleet-net")
	fs.IntVar(&ff.Procs, "procs", 1, "how many generator processes the run has, here and elsewhere (this is one of them)")
	fs.IntVar(&ff.Index, "index", 0, "this process's index, 0 to --procs - 1 (in a Kubernetes Indexed Job: $JOB_COMPLETION_INDEX); index 0 also measures the servers (commands, CPU)")
	fs.StringVar(&ff.slotEnv, "task-slot-env", "", "take the index from this environment variable, which holds a 1-based task slot (Docker Swarm: set it to {{.Task.Slot}} in the service's environment; index = slot - 1), instead of --index")
	fs.StringVar(&ff.startAtText, "start-at", "", "common start time, RFC 3339 (2026-11-23T12:00:00Z) or Unix seconds: the worker connects, then waits for it before its warm-up (default: at once)")
	fs.StringVar(&ff.Clock, "clock", ClockRedis, "what --start-at is read by: 'redis', the deployment's own clock (TIME, its offset from this machine's estimated over several round trips), so that machines whose clocks disagree start together; or 'local', this machine's clock")
	fs.StringVar(&ff.Output, "output", "", "write the result file to this path (default: a new file in --out)")
	fs.StringVar(&ff.Arena, "check-arena", "", "shared-memory checker file of the processes on this machine (lockbench run --procs passes it)")
	_ = fs.MarkHidden("check-arena")
	fs.StringArrayVar(&ff.stallTexts, "stall", nil, "stall this process's lock holders, repeatable: AT+FOR, from the start of the measured phase (3s+2s): the workers holding a lock at AT keep it until AT+FOR, while the process and its watchdog run on (what lockbench run --fault stall:genN@AT+FOR passes to generator N)")
}

// Check reads the flags of run (worker false: --procs, and --net-proc over net, run's --net) or
// of a worker (a task slot from the environment, a time, AT+FOR). The error wraps ErrBadSpec
// and names the flag.
func (ff *FleetFlags) Check(fs *pflag.FlagSet, worker bool, net string) error {
	if ff.Procs < 1 || ff.Procs > MaxProcs {
		return bad("--procs %d: want 1 to %d", ff.Procs, MaxProcs)
	}
	var err error
	if !worker {
		ff.Nets, ff.RunNet, err = ProcNets(ff.procNets, ff.Procs, net)
		return err
	}
	if ff.slotEnv != "" {
		if fs.Changed("index") {
			return bad("give --index or --task-slot-env, not both")
		}
		if ff.Index, err = SlotIndex(ff.slotEnv, os.Getenv(ff.slotEnv), ff.Procs); err != nil {
			return err
		}
	}
	if ff.startAtText != "" {
		t, err := ParseStartAt(ff.startAtText)
		if err != nil {
			return bad("--start-at %q: want an RFC 3339 time (2026-11-23T12:00:00Z) or Unix seconds", ff.startAtText)
		}
		ff.StartAt = t
	}
	ff.Stalls, err = ParseStalls(ff.stallTexts, ff.Index)
	return err
}
