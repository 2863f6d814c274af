package main

// Exit codes: the one place they are defined. README documents them for CI users.
const (
	// exitOK: the command did what was asked; for run, every run completed with no violation.
	exitOK = 0
	// exitFailure: a run could not run, counted errors (driver or server), or the safety checker
	// found mutual-exclusion violations. Results were still written.
	exitFailure = 1
	// exitUsage: bad flags, arguments or input files. Nothing was run.
	exitUsage = 2
	// exitInterrupted: stopped by Ctrl-C or SIGTERM; what was measured was written, marked incomplete.
	exitInterrupted = 130
)
