package main

import (
	"fmt"
	"io"

	"github.com/lockbench/lockbench/report"
)

const reportExamples = `
Draws the runs of the result FILEs (lockbench run and lockbench sweep write them into --out)
into DIR: index.html, one self-contained page (inline CSS and SVG charts, no script, nothing
fetched: it opens offline), and a PNG file of each chart:
  spectrum.png              acquire latency by percentile (HdrHistogram style), per driver
  rounds.png                throughput of each round, per driver (--repeat runs only)
  timeline-throughput.png   throughput second by second, per run (runs with a timeline)
  timeline-p99.png          acquire p99 second by second, per run
  sweep.png                 sweeps: achieved throughput against p99 and p50, SLO and knees
  sweep-spectrum-<driver>.png  sweeps: one driver's spectrum at every step
With several labels and several topologies, the line charts are one per topology
(spectrum-single.png, spectrum-cluster.png, …), a driver's labels side by side in each.
The page also has the summary table and each file's configuration, topology, host and versions.
Several files go into one report; each file or directory is labelled by the shortest part of its
path that tells it apart, or by the NAME of a NAME=PATH argument or --label (BASE/NEW, v1.2/v1.3):
one colour per driver, one line style per label or topology, and grouped bars of drivers ×
labels × topologies when there are several. Incomplete (Ctrl-C) results
and files with skipped drivers are drawn with what they hold. The paths written are printed on
stdout.

Examples:
  lockbench report -o lockbench-results/report lockbench-results/lockbench-20261121T091553Z-contention.json
  lockbench report -o /tmp/compare base/*.json new/*.json
  lockbench report -o /tmp/versions --label v1.2=lockbench-results/v1.2/ --label v1.3=lockbench-results/v1.3/
  lockbench run --driver lockcore,naive --repeat 5 --report lockbench-results/report
  lockbench sweep --driver lockcore,naive --rate-from 2000 --rate-to 200000 --slo p99=2ms --report lockbench-results/report

Exit codes: 0 written, 1 a file could not be written, 2 bad input (no -o, DIR not writable, a
FILE missing, not a lockbench result or of a newer schema).
`

func reportCommand(args []string, stdout, stderr io.Writer) int {
	fs := newCmdFlagSet("report", stderr)
	out := fs.StringP("out", "o", "", "directory for index.html and the PNG files (created if needed; required)")
	title := fs.String("title", "", "title of the page (default \"lockbench report\")")
	labels := fs.StringArray("label", nil, "NAME=PATH: label a result file or directory (all its *.json files) in the charts, e.g. --label BASE=base/ --label NEW=new/; repeatable (a FILE argument NAME=PATH does the same)")
	bad := fs.bad
	if code, done := fs.parse(args, stdout, "Usage: lockbench report -o DIR [flags] FILE...", reportExamples); done {
		return code
	}
	if *out == "" {
		return bad("-o DIR is required: the directory for the report")
	}
	if fs.NArg() == 0 && len(*labels) == 0 {
		return bad("want at least one result file")
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	if err := report.CheckDir(*out); err != nil {
		return bad("-o %s: cannot write there: %v", *out, err)
	}
	sources, err := report.ReadSpecs(append(*labels, fs.Args()...))
	if err != nil {
		return bad("%v", err)
	}
	written, err := report.Write(*out, sources, report.Options{Title: *title})
	for _, p := range written {
		fmt.Fprintln(stdout, p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "lockbench report: %v\n", err)
		return exitFailure
	}
	return exitOK
}
