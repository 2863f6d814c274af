// Package sweep finds the knee of a lock deployment: it steps the load up (the open-loop
// arrival rate or the closed-loop concurrency), runs every driver at every step through a
// caller's step function (a full lockbench run), judges each step against a latency SLO, stops
// stepping a driver once more load is hopeless, and reports per driver the knee: the highest
// load that was achieved with the SLO percentile within its limit.
//
// ParseSLO and GeometricLoads (or CheckLoads) turn command-line input into Options; Run drives
// the steps and returns the runs and a results.Sweep record for the result file; WriteSummary
// renders that record for people.
package sweep
