// Package metrics serves a running lockbench's figures to Prometheus over HTTP
// (lockbench run, sweep and worker --metrics-addr), following Prometheus's
// naming conventions: base units (seconds), _total counters, one metric per
// quantity and labels for what tells runs apart.
//
// A Server listens on one address and exports every run registered with it
// (Server.Run) until it closes: series of finished runs stay, frozen, so that a
// rate over them falls to 0 instead of vanishing. The figures come from the
// run's timeline (workloads.Live): they move once per timeline interval, and
// the workers' hot path pays nothing more than the timeline already costs.
//
// Labels are bounded by the invocation's flags: run_id (one per invocation,
// shared by the generator processes of one run), driver, workload, topology,
// round (--repeat), step (a sweep's step, empty outside sweeps) and generator
// (the process index of a --procs run, 0 otherwise), plus kind on errors.
// There is no per-key or per-worker label.
//
// The metrics:
//
//	lockbench_acquisitions_total            counter    locks acquired and released (measured phase)
//	lockbench_lock_attempts_total           counter    lock attempts sent to Redis (drivers that count them)
//	lockbench_failed_attempts_total         counter    attempts that found the lock taken (idem)
//	lockbench_errors_total{kind}            counter    failed operations by kind
//	lockbench_violations_total              counter    safety violations (warm-up included, as in the result)
//	lockbench_acquire_wait_seconds          histogram  acquire latency (open loop: from the intended start)
//	lockbench_cycle_seconds                 histogram  acquire start to release end (hold included)
//	lockbench_attempts_in_flight            gauge      cycles begun and not finished
//	lockbench_open_loop_late_total          counter    open-loop slots started late (every worker busy)
//	lockbench_open_loop_dropped_total       counter    open-loop slots never started (known at the run's end)
//	lockbench_redis_commands_total          counter    commands the servers ran (INFO commandstats, polled)
//	lockbench_redis_commands_per_acquisition gauge     the two above, divided, over the run so far
//	lockbench_measuring                     gauge      1 while the run's measured phase runs, then 0
package metrics
