package bench

import (
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// Step is one run of a session: which driver, where it stands in the session, and what a sweep
// changes for it.
type Step struct {
	Driver string
	// Round is the run's round, 1-based; Seq its place among Total runs, for progress lines.
	Round, Seq, Total int
	// Index is a sweep's step, for the metrics' labels; 0 outside a sweep.
	Index int
	// Concurrency and Rate, when not zero, replace the spec's for this run (a sweep's load).
	Concurrency int
	Rate        float64
	// Abort, if set, replaces the spec's AbortOnFail check: a non-empty answer stops the
	// measured phase with that reason (a sweep's SLO).
	Abort func(driver string, l workloads.Live) string
}

// Outcome is what became of one run.
type Outcome struct {
	// Run is the run as the result file records it; nil when it did not run (skipped, refused,
	// could not start).
	Run *results.Run
	// Skip is set when the driver cannot do this (drivers.ErrUnsupported): not a failure; later
	// rounds of the session leave the driver out.
	Skip *results.Skip
	// Failed: the run could not run, or counted errors, violations, a stall, refusals, no
	// acquisition, or a failed fault.
	Failed bool
	// BadConfig: the workload refused the configuration (workloads.ErrBadConfig), a usage error.
	BadConfig bool
	// Aborted: the run was stopped early by its live check (Run.Aborted says why).
	Aborted bool
}
