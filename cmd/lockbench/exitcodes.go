package main

// Exit codes: the one place they are defined. docs/run.md documents them for CI users.
const (
	// exitOK: the command did what was asked; for run, every run completed with no violation
	// and every --threshold held; for compare, no regression.
	exitOK = 0
	// exitFailure: a run could not run, counted errors (driver or server), or the safety checker
	// found mutual-exclusion violations. Results were still written. For compare: a regression,
	// a safety violation in NEW, or (--strict) an inconclusive row.
	exitFailure = 1
	// exitUsage: bad flags, arguments or input files. Nothing was run (compare: nothing was
	// compared).
	exitUsage = 2
	// exitThresholds: every run completed without errors or violations, but a --threshold
	// failed. Errors and violations take precedence (exitFailure), so a threshold's failure is
	// never mistaken for a broken run, nor the reverse.
	exitThresholds = 3
	// exitInterrupted: stopped by Ctrl-C or SIGTERM; what was measured was written, marked incomplete.
	exitInterrupted = 130
)
