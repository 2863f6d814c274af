package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/results"
)

const mergeHelp = `Usage: lockbench merge FILE... -o OUT [--label NAME]
       lockbench merge --from ADDR --run ID [--expect N] -o OUT [--label NAME]

Merges the results that 'lockbench worker' processes wrote (one per process, on one machine
or many) into one result file, the same as 'lockbench run --procs' writes: the HDR histograms
merged (not their percentiles averaged), acquisitions, errors, violations, commands and workers
added up, each process's own figures kept, Jain's fairness index over processes and workers.
The results are read and merged one at a time, so any number of processes merge in the memory
of one result.

FILE...: result files (--output of each worker). A process of the run (--procs) whose file is
missing is listed as lost and the result is marked incomplete.

--from ADDR --run ID: the results the workers stored with --collect ADDR --run ID, fetched from
that Redis. merge checks that they are exactly the N processes of one run (--expect N, default
the --procs the results say): a process stored twice, or a result of another run or process
count, is refused, naming the process; missing processes are named, and what the others measured
is still written, marked incomplete (exit 1).

Either way, results of different configurations (driver, workload, keys, concurrency, seed,
start time, number of processes, run id, lockbench version or image) are refused, naming the
process and the field.

The merged file keeps the label (lockbench run --label) its results carry when they all carry
the same one; results labelled differently still merge, into a file with no label and a warning
naming the labels. --label NAME gives the merged file that label, whatever the results carry
(workers' results carry none).

Exit codes: 0 merged, 1 merged but the run had safety violations or errors, or processes are
missing, 2 bad input (unreadable files, results of different runs, no -o, a bad --label).`

// mergeCommand is lockbench merge.
func mergeCommand(args []string, stdout, stderr io.Writer) int {
	fs := newCmdFlagSet("merge", stderr)
	fs.SortFlags = true // as merge has always listed them
	out := fs.StringP("output", "o", "", "the merged result file to write")
	from := fs.String("from", "", "fetch the results from this Redis (what the workers' --collect named) instead of files")
	runID := fs.String("run", "", "with --from: the run whose results to fetch (the workers' --run)")
	expect := fs.Int("expect", 0, "with --from: the number of processes the run must have (default: as the results say)")
	caFile := fs.String("collect-ca-file", "", "with --from rediss://: the CA that signed its certificate")
	label := fs.String("label", "", "a name for the merged result file, e.g. BASE, NEW or v1.3 (letters, digits, . _ + -); default: the label the results share, if any")
	if code, done := fs.parse(args, stdout, mergeHelp, ""); done {
		return code
	}
	bad := fs.bad
	if *out == "" {
		return bad("-o OUT: where to write the merged result")
	}
	if *label != "" {
		if err := results.CheckLabel(*label); err != nil {
			return bad("--%v", err)
		}
	}
	command := append([]string{"lockbench", "merge"}, args...)
	var merged *results.File
	var missing error
	if *from != "" {
		switch {
		case fs.NArg() > 0:
			return bad("give result files or --from, not both")
		case *runID == "":
			return bad("--from needs --run ID: the workers' --run")
		case *expect < 0 || *expect > bench.MaxProcs:
			return bad("--expect %d: want 1 to %d", *expect, bench.MaxProcs)
		}
		if err := collect.CheckRunID(*runID); err != nil {
			return bad("--run: %v", err)
		}
		if flagsOnly(stdout) {
			return exitOK
		}
		var code int
		merged, code, missing = mergeFrom(collect.Options{Addr: *from, CAFile: *caFile}, *runID, *expect, command, stderr)
		if code != exitOK {
			return code
		}
	} else {
		if *runID != "" || *expect != 0 || *caFile != "" {
			return bad("--run, --expect and --collect-ca-file go with --from")
		}
		if fs.NArg() == 0 {
			return bad("no result files to merge (or --from ADDR --run ID)")
		}
		if flagsOnly(stdout) {
			return exitOK
		}
		g := results.NewFileMerger(version, command)
		if err := g.AddFiles(fs.Args()); err != nil {
			return bad("%s", results.MismatchText(err))
		}
		var err error
		if merged, err = g.File(); err != nil {
			return bad("%s", results.MismatchText(err))
		}
	}
	if *label != "" {
		merged.Relabel(*label)
	}
	return writeMerged(merged, *out, missing, stdout, stderr)
}

// mergeFrom fetches and merges run runID's results from the store (merge --from). It returns
// the merged file, with missing saying which processes are absent from it; or, with no file to
// write, the exit code after saying why.
func mergeFrom(opt collect.Options, runID string, expect int, command []string, stderr io.Writer) (merged *results.File, code int, missing error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The first Ctrl-C ends the fetch (nothing is written); a second quits at once.
	in := catchInterrupts(func(os.Signal) {}, cancel)
	defer in.release()
	merged, err := collect.Fetch(ctx, opt, runID, expect, version, command)
	switch {
	case errors.Is(err, collect.ErrMissing) && merged != nil:
		return merged, exitOK, err
	case errors.Is(err, collect.ErrMissing):
		fmt.Fprintf(stderr, "lockbench merge: %v\n", err)
		return nil, exitFailure, nil
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "lockbench merge: interrupted; nothing written")
		return nil, exitInterrupted, nil
	case err != nil && !collect.BadInput(err):
		fmt.Fprintf(stderr, "lockbench merge: %v\n", conn.RedactURL(err.Error()))
		return nil, exitFailure, nil // the store did not answer: nothing wrong with the input
	case err != nil:
		fmt.Fprintf(stderr, "lockbench merge: %s\nRun 'lockbench merge --help' for usage.\n", results.MismatchText(err))
		return nil, exitUsage, nil
	}
	return merged, exitOK, nil
}

// writeMerged writes the merged file and its summary, and returns merge's exit code.
func writeMerged(merged *results.File, out string, missing error, stdout, stderr io.Writer) int {
	if err := results.WriteFileAt(out, merged); err != nil {
		fmt.Fprintf(stderr, "lockbench merge: %v\n", err)
		return exitFailure
	}
	printErrors(stderr, "merge", results.WriteMerged(stdout, merged))
	fmt.Fprintf(stderr, "merged %d results into %s\n", merged.Processes(), out)
	for _, r := range merged.Runs {
		if r.Fleet != nil {
			for _, w := range r.Fleet.Warnings {
				fmt.Fprintf(stderr, "warning: %s: %s\n", r.Driver, w)
			}
		}
	}
	if missing != nil {
		fmt.Fprintf(stderr, "lockbench merge: %v (what the others measured is written, marked incomplete)\n", missing)
		return exitFailure
	}
	for _, r := range merged.Runs {
		if r.Violations > 0 || r.Errors > 0 {
			fmt.Fprintf(stderr, "lockbench merge: %s: %d errors, %s\n", r.Driver, r.Errors, bench.SafetySummary(&r))
			return exitFailure
		}
	}
	return exitOK
}
