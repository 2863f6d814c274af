package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/spf13/pflag"
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
The page also has the summary table and each file's configuration, topology, host and versions.
Several files go into one report, their runs labelled by file name. Incomplete (Ctrl-C) results
and files with skipped drivers are drawn with what they hold. The paths written are printed on
stdout.

Examples:
  lockbench report -o report results/lockbench-20261121T091553Z-contention.json
  lockbench report -o /tmp/compare base/*.json new/*.json
  lockbench run --driver lockcore,naive --repeat 5 --report report
  lockbench sweep --driver lockcore,naive --rate-from 2000 --rate-to 200000 --slo p99=2ms --report report

Exit codes: 0 written, 1 a file could not be written, 2 bad input (no -o, DIR not writable, a
FILE missing, not a lockbench result or of a newer schema).
`

func reportCommand(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("lockbench report", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	out := fs.StringP("out", "o", "", "directory for index.html and the PNG files (created if needed; required)")
	title := fs.String("title", "", "title of the page (default \"lockbench report\")")
	help := fs.BoolP("help", "h", false, "show this help")
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lockbench report: "+format+"\nRun 'lockbench report --help' for usage.\n", a...)
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		return bad("%v", err)
	}
	if *help {
		fmt.Fprintf(stdout, "Usage: lockbench report -o DIR [flags] FILE...\n\nFlags:\n%s%s", fs.FlagUsages(), reportExamples)
		return exitOK
	}
	if *out == "" {
		return bad("-o DIR is required: the directory for the report")
	}
	if fs.NArg() == 0 {
		return bad("want at least one result file")
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	if err := report.CheckDir(*out); err != nil {
		return bad("-o %s: cannot write there: %v", *out, err)
	}
	sources := make([]report.Source, fs.NArg())
	names := sourceNames(fs.Args())
	for i, path := range fs.Args() {
		f, err := results.ReadFile(path)
		if err != nil {
			return bad("%v", err)
		}
		sources[i] = report.Source{Name: names[i], File: f}
	}
	if err := writeReport(*out, sources, *title, stdout); err != nil {
		fmt.Fprintf(stderr, "lockbench report: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// sourceNames labels each file by its base name, or by the path as given when two files share
// a base name (base/x.json and new/x.json).
func sourceNames(paths []string) []string {
	count := make(map[string]int)
	for _, p := range paths {
		count[filepath.Base(p)]++
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
		if count[names[i]] > 1 {
			names[i] = p
		}
	}
	return names
}

// writeReport builds the report of the sources and writes it into dir, printing the paths.
func writeReport(dir string, sources []report.Source, title string, stdout io.Writer) error {
	rep, err := report.Build(sources, report.Options{Title: title})
	if err != nil {
		return err
	}
	written, err := rep.WriteFiles(dir)
	for _, p := range written {
		fmt.Fprintln(stdout, p)
	}
	return err
}

// runReport writes the report of lockbench run's results into dir (--report).
func runReport(dir string, file *results.File, ui *progressUI) error {
	var paths bytes.Buffer
	if err := writeReport(dir, []report.Source{{File: file}}, "", &paths); err != nil {
		return err
	}
	ui.line("report: %s (and %d PNG charts)", filepath.Join(dir, report.HTMLName), strings.Count(paths.String(), "\n")-1)
	return nil
}
