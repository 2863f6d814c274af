package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/lockbench/lockbench/compare"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

const compareExamples = `
BASE and NEW are result files (lockbench run writes them into --out), or directories whose
*.json result files are pooled. Runs are grouped by driver and case (workload, topology,
concurrency, keys, key distribution, hold, …); each group found on both sides is compared metric
by metric over its repeated runs (--repeat), with benchstat's statistics: medians with 95%
confidence intervals and the Mann–Whitney U test.

A row REGRESSES when NEW is worse than BASE by more than the metric's --max-regression, with
significance (a one-sided test of "NEW is worse" against BASE moved by the threshold, so neither
noise nor a real change below the threshold fails). Only the --gate metrics (throughput and p99
by default) fail the gate; the others are reported. alpha is shared over the gated rows.

The gate fails closed: when a gated row has too few runs for the test ever to reach its level
(3+3 with one driver at alpha 0.05: the smallest one-sided p is 1/20 > 0.025), compare says so,
names the --repeat that would do, and exits 1; --allow-inconclusive lets it pass. A median worse
than the threshold without significance is INCONCLUSIVE: it fails only with --strict. Any safety
violation in NEW fails, whatever the statistics.

Examples:
  # On the base branch, then on the change; 10 interleaved rounds each:
  lockbench run --driver lockcore --repeat 10 --duration 5s --out base
  lockbench run --driver lockcore --repeat 10 --duration 5s --out new
  lockbench compare base new

  # Tighter on throughput, looser on the tail; a markdown table for a pull request:
  lockbench compare --max-regression throughput=3%,p999=30% --format markdown base.json new.json

  # Gate on more metrics (each spends a share of alpha: more runs are needed):
  lockbench compare --gate throughput,p99,p50,cmds base new

  # Gate an environment change: NEW ran with --net latency=1ms, BASE without:
  lockbench compare --ignore net base new

  # A BASE/NEW page with charts beside the verdicts:
  lockbench compare --report /tmp/base-vs-new base new

  # Pass even when there are too few runs to tell (the summary still says so):
  lockbench compare --allow-inconclusive base new

Metrics and default --max-regression: DEFAULTS.
Exit codes: 0 no regression, 1 a gated regression, violations, too few runs to decide (unless
--allow-inconclusive) or inconclusive with --strict,
2 bad input (a file missing or not a lockbench result of schema 1, no runs, nothing in common,
a bad flag).
`

func compareCommand(args []string, stdout, stderr io.Writer) int {
	fs := newCmdFlagSet("compare", stderr)
	maxReg := fs.StringSlice("max-regression", nil, "largest change for the worse tolerated per metric, e.g. throughput=5%,p99=10% (repeatable; unnamed metrics keep their defaults)")
	alpha := fs.Float64("alpha", compare.DefaultAlpha, "significance level of the tests")
	strict := fs.Bool("strict", false, "fail on inconclusive gated rows too (a median worse than the threshold without significance)")
	allowInc := fs.Bool("allow-inconclusive", false, "pass when a gated row has too few runs for the test ever to reach significance (default: that fails, naming the --repeat needed)")
	gate := fs.StringSlice("gate", compare.DefaultGate, "metrics whose regressions fail the gate, comma separated; the others are reported only. Safety violations always fail")
	format := fs.String("format", "text", "output: text, json or markdown (for a pull-request comment)")
	reportDir := fs.String("report", "", "also write a BASE/NEW page with its charts into this directory (index.html, PNGs): the verdicts, the medians side by side, the grouped bars")
	ignore := fs.StringSlice("ignore", nil, "case fields left out of matching BASE with NEW, comma separated (benchstat's -ignore), e.g. net to compare a --net run with one without: "+strings.Join(results.CaseLabels(), ", "))

	bad := fs.bad
	if code, done := fs.parse(args, stdout, "Usage: lockbench compare [flags] BASE NEW", strings.Replace(compareExamples, "DEFAULTS", compare.FormatMaxRegression(compare.DefaultMaxRegression), 1)); done {
		return code
	}
	if fs.NArg() != 2 {
		return bad("want two arguments, BASE and NEW (result files or directories), got %d", fs.NArg())
	}
	if err := compare.CheckFormat(*format); err != nil {
		return bad("--%v", err)
	}
	opts := compare.Options{Alpha: *alpha, Strict: *strict, AllowInconclusive: *allowInc, Gate: *gate, Ignore: *ignore}
	var err error
	if opts.MaxRegression, err = compare.ParseMaxRegression(*maxReg...); err != nil {
		return bad("%v", err)
	}
	if !(*alpha > 0 && *alpha < 1) {
		return bad("--alpha %v: want above 0 and below 1, e.g. 0.05", *alpha)
	}
	if *reportDir != "" {
		if err := report.CheckDir(*reportDir); err != nil {
			return bad("--report %s: cannot write there: %v", *reportDir, err)
		}
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	rep, err := compare.Paths(fs.Arg(0), fs.Arg(1), opts)
	if err != nil {
		return bad("%v", err) // every error of Paths is compare.ErrBadInput
	}
	if err := rep.WriteFormat(stdout, *format); err != nil {
		fmt.Fprintf(stderr, "lockbench compare: %v\n", err)
		return exitFailure
	}
	if *reportDir != "" && !writeComparePage(*reportDir, fs.Arg(0), fs.Arg(1), rep, stderr) {
		return exitFailure
	}
	if rep.Failed() {
		return exitFailure
	}
	return exitOK
}

// writeComparePage writes compare --report's BASE/NEW page of rep into dir, the paths written on
// stderr (stdout is the comparison's, which a pull-request comment may take whole).
func writeComparePage(dir, basePath, newPath string, rep *compare.Report, stderr io.Writer) bool {
	written, err := report.WriteComparePaths(dir, basePath, newPath, rep)
	for _, p := range written {
		fmt.Fprintf(stderr, "report: %s\n", p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "lockbench compare: --report: %v\n", err)
		return false
	}
	return true
}
