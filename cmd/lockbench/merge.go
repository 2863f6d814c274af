package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/lockbench/lockbench/results"
	"github.com/spf13/pflag"
)

const mergeHelp = `Usage: lockbench merge FILE... -o OUT

Merges the result files that 'lockbench worker' processes wrote (one per process, on one machine
or many) into one result file, the same as 'lockbench run --procs' writes: the HDR histograms
merged (not their percentiles averaged), acquisitions, errors, violations, commands and workers
added up, each process's own figures kept, Jain's fairness index over processes and workers. A
process of the run (--procs) whose file is missing is listed as lost and the result is marked
incomplete. Files from different runs (another driver, workload, keys, concurrency, seed, start
time or number of processes), or one process given twice, are refused.

Exit codes: 0 merged, 1 merged but the run had safety violations or errors, 2 bad input
(unreadable files, files of different configurations, no -o).

Flags:
`

// mergeCommand is lockbench merge.
func mergeCommand(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("lockbench merge", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.StringP("output", "o", "", "the merged result file to write")
	help := fs.BoolP("help", "h", false, "show this help")
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lockbench merge: "+format+"\nRun 'lockbench merge --help' for usage.\n", a...)
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		return bad("%v", err)
	}
	if *help {
		fmt.Fprint(stdout, mergeHelp+fs.FlagUsages())
		return exitOK
	}
	if *out == "" {
		return bad("-o OUT: where to write the merged result")
	}
	if fs.NArg() == 0 {
		return bad("no result files to merge")
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	var files []*results.File
	for _, path := range fs.Args() {
		f, err := results.ReadFile(path)
		if err != nil {
			return bad("%v", err)
		}
		files = append(files, f)
	}
	merged, err := results.MergeFiles(version, append([]string{"lockbench", "merge"}, args...), files)
	if err != nil {
		msg := err.Error()
		if errors.Is(err, results.ErrFleetMismatch) {
			msg = "the files are not the processes of one run: " + strings.TrimPrefix(msg, results.ErrFleetMismatch.Error()+": ")
		}
		return bad("%s", msg)
	}
	if err := results.WriteFileAt(*out, merged); err != nil {
		fmt.Fprintf(stderr, "lockbench merge: %v\n", err)
		return exitFailure
	}
	if len(merged.Runs) > 0 {
		if err := results.WriteSummary(stdout, merged.Runs); err != nil {
			fmt.Fprintf(stderr, "lockbench merge: summary: %v\n", err)
		}
		if err := results.WriteFairness(stdout, merged.Runs); err != nil {
			fmt.Fprintf(stderr, "lockbench merge: fairness: %v\n", err)
		}
	}
	fmt.Fprintf(stderr, "merged %d files into %s\n", len(files), *out)
	for _, r := range merged.Runs {
		if r.Violations > 0 || r.Errors > 0 {
			fmt.Fprintf(stderr, "lockbench merge: %s: %d errors, %s\n", r.Driver, r.Errors, safetySummary(&r))
			return exitFailure
		}
	}
	return exitOK
}
