package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/conn"
)

// envImage names the container image a worker runs in; its orchestrator sets it (the image's
// reference or id), and merge refuses workers of different images.
const envImage = "LOCKBENCH_IMAGE"

// workerCommand is lockbench worker: one generator process of a run made by several (bench.Work).
func workerCommand(args []string, stdout, stderr io.Writer) int {
	w, f, code, ok := parseWorker(args, stdout, stderr)
	if !ok {
		return code
	}
	ui := newProgressUI(stderr)
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
	f, code, ok := parseRunFlagsAs(cmdWorker, args, stdout, stderr)
	if !ok {
		return bench.WorkerSpec{}, nil, code, false
	}
	return f.workerSpec(), f, exitOK, true
}
