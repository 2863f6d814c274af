package main

import (
	"fmt"
	"io"

	"github.com/lockbench/lockbench/results"
)

const exportExamples = `
For every run in each result FILE, writes beside it (or into --out):
  X-<driver>[-r<round>].hgrm  the run's acquire latency percentiles, in HdrHistogram's percentile
                              format (milliseconds), for HdrHistogram's plotter
  X-<driver>[-r<round>].hlog  an HdrHistogram interval log of 1 s intervals of acquire latency
                              (microseconds), from the run's timeline
where X.json is the result file. lockbench run writes the same files after each run; export makes
them again, e.g. from results copied off a CI machine. Runs from before timelines get no .hlog.
The paths written are printed on stdout.

Examples:
  lockbench export lockbench-results/lockbench-20261121T091553Z-contention.json
  lockbench export --out /tmp/hdr lockbench-results/*.json

Exit codes: 0 written, 1 a file could not be written, 2 bad input (missing file, not a result).
`

func exportCommand(args []string, stdout, stderr io.Writer) int {
	fs := newCmdFlagSet("export", stderr)
	out := fs.String("out", "", "directory for the files (default: beside each result file)")
	bad := fs.bad
	if code, done := fs.parse(args, stdout, "Usage: lockbench export [flags] FILE...", exportExamples); done {
		return code
	}
	if fs.NArg() == 0 {
		return bad("want at least one result file")
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	// Read every file first: bad input writes nothing.
	files, err := results.ReadRunFiles(fs.Args())
	if err != nil {
		return bad("%v", err)
	}
	for i, path := range fs.Args() {
		written, err := results.Export(path, *out, files[i])
		for _, w := range written {
			fmt.Fprintln(stdout, w.Hgrm)
			if w.IntervalLog != "" {
				fmt.Fprintln(stdout, w.IntervalLog)
			} else {
				r := files[i].Runs[w.Run]
				fmt.Fprintf(stderr, "lockbench export: %s round %d: %v (written by an older lockbench?): no .hlog\n", r.Driver, r.Round, results.ErrNoTimeline)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "lockbench export: %v\n", err)
			return exitFailure
		}
	}
	return exitOK
}
