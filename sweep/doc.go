// Package sweep finds the knee of a lock deployment: it steps the load up (the open-loop
// arrival rate or the closed-loop concurrency), runs every driver at every step through a
// caller's step function (a full lockbench run), judges each step against a latency SLO, stops
// stepping a driver once more load is hopeless, and reports per driver the knee as a bracket:
// at or above the highest load that was achieved with the SLO percentile within its limit,
// below the lowest load above it that was not.
//
// So that the same command gives the same answer twice, a step can run in rounds (drivers
// interleaved) and be decided on a confidence interval of its percentile across them (ok, over,
// or uncertain when it straddles the limit, which earns more rounds); the bracket can be
// refined by bisection to a precision within a time budget; and a rate sweep can first measure
// the machine's noise floor and warn when the SLO sits on it.
//
// ParseSLO and GeometricLoads (or CheckLoads) turn command-line input into Options; PlanTime
// says how long a sweep may take, and WritePlan and Plan.Describe say it for people; Run drives
// the steps and returns the runs and a results.Sweep record for the result file; a Status turns
// Run's progress events into log lines and a progress line; WriteSummary renders the record for
// people.
//
// Files: sweep.go (Options, Run), rounds.go (a step's rounds and their verdict), interval.go
// (the order-statistics interval), judge.go and openloop.go (one verdict's rules), refine.go
// (the bracket and its bisection), floor.go (the noise floor), plan.go (the planned time),
// steps.go and slo.go (input), describe.go (the plan's text), status.go (progress text),
// summary.go (output).
package sweep
