package main

// sweepExamples ends lockbench sweep --help: examples, then what a sweep does, its verdicts,
// its output and its exit codes.
const sweepExamples = `
Examples:
  # Closed loop: 1 to 128 workers, lockcore and naive interleaved, knee at p99 <= 5ms:
  lockbench sweep --driver lockcore,naive --concurrency-steps 1,2,4,8,16,32,64,128 --slo p99=5ms --duration 3s

  # Open loop: 8 arrival rates spaced geometrically from 2000/s to 200000/s, knee at p99 <= 2ms:
  lockbench sweep --driver lockcore,naive --rate-from 2000 --rate-to 200000 --steps 8 --slo p99=2ms --duration 3s

  # Rates given one by one, knee on the 99.9th percentile:
  lockbench sweep --rates 1000,5000,10000,20000 --slo p999=10ms

  # The plan and the most time it may take, without measuring:
  lockbench sweep --driver lockcore,naive --rate-from 5000 --rate-to 160000 --steps 6 --slo p99=2ms --dry-run

Each step is a full run (fresh client, clean keyspace, warm-up, measured phase, safety checker)
with every other flag as in 'lockbench run', repeated --rounds times (default 3). Drivers are
interleaved: each round of a load runs on every driver still stepping before the next round.

A step's verdict, on the acquire latency at the --slo percentile of its rounds pooled:
  ok          the load was achieved, and the pooled percentile and its interval across the
              rounds are within the SLO
  over        the load was achieved, but the pooled percentile and the interval are above it
  uncertain   the interval straddles the SLO (or the pooled figure and the interval disagree)
              even after --max-rounds rounds (one more at a time while that can narrow it); the
              interval is of order statistics of the rounds' percentiles (3 rounds: their
              range, 75% coverage; 6: the 2nd to the 5th, 78%)
  saturated   the load was not achieved: open loop, the achieved rate is more than
              --saturation-margin below the target, or more than that share of the schedule
              was not kept (attempts late or dropped because all --concurrency workers were
              busy); closed loop, the throughput is more than --saturation-margin below the
              best of the driver's lower steps (more workers got less done)
  failed      errors or safety violations (or the run could not start)
A driver stops stepping after a step that failed, a saturated step (closed loop: the second
saturated step in a row, since one step's dip on a shared machine may be noise), or a step whose
percentile is above --stop-factor × the SLO.

The knee is a bracket: at or above the highest load that was ok, below the lowest load above it
that was not. After the grid, each bracket is bisected until its upper load is within
--precision (default 5%) of its lower one, or --budget (default 10m) would be passed; refined
steps are reported like grid steps. A rate sweep first measures each driver's noise floor at
--noise-floor × the first rate, and warns when it is within 2 × of the SLO. --dry-run prints the
plan and the most time it may take; the first progress line says it too.

Output: the steps and the knees on stdout, progress on stderr (on a terminal: the step, the time
elapsed and the most left), and in --out one result file for the whole sweep: every step a run,
plus a "sweep" record (mode, loads, SLO, rounds, every step's verdict and interval, the noise
floor, each driver's knee bracket and why it stopped).

Exit codes: 0 the sweep ran (with or without a knee), 1 a step failed (errors, safety
violations), 2 bad input (flags, SLO, steps, an --out that cannot be written, an --addr that
does not answer), 130 interrupted (the steps done are written, marked incomplete).
`
