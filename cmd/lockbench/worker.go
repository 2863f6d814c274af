package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/progress"
)

// envImage names the container image a worker runs in; its orchestrator sets it (the image's
// reference or id), and merge refuses workers of different images.
const envImage = "LOCKBENCH_IMAGE"

// workerHelp ends lockbench worker --help, in place of run's examples.
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

// workerCommand is lockbench worker: one generator process of a run made by several (bench.Work).
func workerCommand(args []string, stdout, stderr io.Writer) int {
	w, f, code, ok := parseWorker(args, stdout, stderr)
	if !ok {
		return code
	}
	ui := progress.New(stderr)
	stopProfiles, ok := profile("worker", f, stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfiles()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := catchInterrupts(interruptedLine(ui, "again to quit at once"), cancel)
	defer in.release()

	res, err := bench.Work(ctx, w, bench.WorkerOptions{Reporter: ui, Version: version, Command: conn.RedactArgs(os.Args), Image: os.Getenv(envImage)})
	if err != nil {
		fmt.Fprintf(stderr, "lockbench worker: %v\n", err)
		switch {
		case ctx.Err() != nil:
			return exitInterrupted
		case errors.Is(err, bench.ErrBadSpec):
			return exitUsage
		}
		return exitFailure
	}
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case res.Failed:
		return exitFailure
	}
	return exitOK
}

// parseWorker reads the worker's command line, as bench.WorkerSpec.Args writes it (and people
// and orchestrators do: run's flags for one driver, and the worker's own), into the spec it
// runs. On false it has said why (or shown the help) and code is the exit code.
func parseWorker(args []string, stdout, stderr io.Writer) (bench.WorkerSpec, *runFlags, int, bool) {
	f, code, ok := parseCommandFlags(commandFlags{name: cmdWorker, examples: workerHelp}, args, stdout, stderr)
	if !ok {
		return bench.WorkerSpec{}, nil, code, false
	}
	return f.workerSpec(), f, exitOK, true
}
