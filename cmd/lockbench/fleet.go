package main

import (
	"errors"
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

// The commands that take the run flags.
const (
	cmdRun    = "run"
	cmdWorker = "worker"
	cmdSweep  = "sweep"
)

// maxProcs bounds --procs and merge's --expect.
const maxProcs = bench.MaxProcs

// The worker's --clock: what its --start-at is read by.
const (
	clockRedis = bench.ClockRedis
	clockLocal = bench.ClockLocal
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

// checkFleetFlags returns what is wrong with the fleet flags, or "": run's --procs and
// --net-proc; the worker's flags as they are written (a task slot, a time, AT+FOR), then the
// spec they make (bench.WorkerSpec.Validate), then what a worker does not do.
func checkFleetFlags(fs *pflag.FlagSet, f *runFlags, cmd string) string {
	ff := &f.fleet
	if ff.procs < 1 || ff.procs > maxProcs {
		return fmt.Sprintf("--procs %d: want 1 to %d", ff.procs, maxProcs)
	}
	if cmd == cmdRun {
		return checkProcNets(ff)
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
		t, err := parseStartAt(ff.startAtText)
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
	if err := f.workerSpec().Validate(); err != nil {
		return err.Error()
	}
	switch {
	case len(f.drivers) != 1:
		return fmt.Sprintf("a worker runs one driver, not %d (--driver %s): start one set of workers per driver", len(f.drivers), strings.Join(f.drivers, ","))
	case f.repeat != 1:
		return "a worker runs once: start the workers again to repeat (--repeat is for lockbench run)"
	case len(f.thresholds) > 0:
		return "--threshold is checked by lockbench run or on the merged file (lockbench compare), not by a worker"
	case fs.Changed("provider") || fs.Changed("image"):
		return "a worker attaches to a running deployment (--addr); --provider and --image are for lockbench run"
	}
	return ""
}

// parseStartAt reads an RFC 3339 time or Unix seconds (with a fraction).
func parseStartAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	sec, err := strconv.ParseFloat(s, 64)
	if err != nil || sec <= 0 || sec > 1e11 {
		return time.Time{}, errors.New("bad time")
	}
	return time.Unix(0, int64(sec*1e9)).UTC(), nil
}

// fleetHelp gives lockbench worker its own introduction in place of the examples of run
// (or sweep).
func fleetHelp(cmd, runHelp string) string {
	if cmd != cmdWorker {
		return runHelp
	}
	return workerHelp
}

const workerHelp = `
lockbench worker is one generator process of a run made by several: the process 'lockbench run
--procs N' starts N times, and the command to run on many machines under an orchestrator (a
Kubernetes Indexed Job: deploy/kubernetes/). It takes run's flags for one driver, attaches to a
running deployment (--addr), connects, waits for --start-at, warms up, measures, and writes one
result file (--output). 'lockbench merge' merges the files of all processes into one result, as
--procs does: histograms merged, counts added up, per-process figures and Jain's index kept.

Example, 3 processes started by hand against one Redis:
  T=$(date -u -d '+10 sec' +%Y-%m-%dT%H:%M:%SZ)
  for i in 0 1 2; do
    lockbench worker --addr 10.0.0.5:6379 --driver lockcore --concurrency 16 --keys 1 \
      --procs 3 --index $i --start-at $T --output out/proc-$i.json &
  done; wait
  lockbench merge out/proc-*.json -o merged.json

--start-at is read by the deployment's clock (--clock redis, the default: TIME, its offset
estimated over several round trips), so machines whose clocks disagree still start together.
With --collect ADDR --run ID a worker stores its result in that Redis instead of a file, for
'lockbench merge --from ADDR --run ID --expect N': no volume shared by the machines.

Processes on one machine started by 'lockbench run --procs' share a safety checker (shared
memory); across machines, --referee ADDR --run ID has every holder mark its critical section
on a separate Redis, which counts two holders at once (see docs/procs.md).

Exit codes: 0 ok, 1 the run failed or found safety violations, 2 bad input, 130 interrupted.
`

// fleet is the generator processes the flags ask for (--procs, --generators docker), or nil
// for runs in this process alone. metrics is where the processes serve theirs.
func (f *runFlags) fleetSpec(metrics *bench.Metrics) *bench.Fleet {
	if f.fleet.procs < 2 && !f.gens.docker() {
		return nil
	}
	fl := &bench.Fleet{
		Procs:      f.fleet.procs,
		Collect:    bench.Endpoint{Addr: f.collect.addr, CAFile: f.collect.caFile},
		Conn:       f.conn.opt,
		CPUProfile: f.cpuprof,
		Trace:      f.tracefile,
		Metrics:    metrics,
		Version:    version,
	}
	if len(f.fleet.procNet) > 0 {
		fl.Nets = make([]string, f.fleet.procs)
		for i := range fl.Nets {
			fl.Nets[i] = netOfProc(f, i)
		}
	}
	if f.gens.docker() {
		fl.Docker = &bench.Docker{Image: f.gens.image, CPUs: f.gens.cpus, Network: f.gens.network}
	}
	return fl
}

// workerSpec is the spec of the worker the flags describe (lockbench worker's flags).
func (f *runFlags) workerSpec() bench.WorkerSpec {
	ff := f.fleet
	w := bench.WorkerSpec{
		Driver:     f.drivers[0],
		Workload:   f.workload,
		Config:     f.cfg,
		Lease:      f.lease,
		Topology:   f.spec,
		Addrs:      f.addrs,
		Conn:       f.conn.opt,
		Procs:      ff.procs,
		Index:      ff.index,
		StartAt:    ff.startAt,
		Clock:      ff.clock,
		Output:     ff.output,
		Out:        f.out,
		NoResults:  f.noResults,
		Arena:      ff.arena,
		Net:        f.net.String(),
		FleetNet:   ff.fleetNet,
		RunID:      f.collect.runID,
		Collect:    bench.Endpoint{Addr: f.collect.addr, CAFile: f.collect.caFile},
		Referee:    bench.Endpoint{Addr: f.referee.addr, CAFile: f.referee.caFile},
		Resource:   f.resource.kind,
		Metrics:    bench.WorkerMetrics{Addr: f.metrics.addr, RunID: f.metrics.runID, Round: f.metrics.round, Linger: f.metrics.linger},
		CPUProfile: f.cpuprof,
		Trace:      f.tracefile,
		Stalls:     ff.stalls,
	}
	return w.Filled()
}
