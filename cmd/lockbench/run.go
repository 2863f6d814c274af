package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/lockbench/lockbench/progress"
	"github.com/lockbench/lockbench/target"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/thresholds"
)

const runExamples = `
Examples:
  # Compare the naive SET NX lock and lockcore on a private redis-server lockbench starts:
  lockbench run

  # The acceptance run: 64 workers over 10000 keys for 10 s, both drivers in one invocation:
  lockbench run --driver lockcore,naive --concurrency 64 --keys 10000 --duration 10s

  # Side by side, 5 interleaved rounds each (a b, b a, …); medians and ratios to naive:
  lockbench run --driver naive,lockcore --repeat 5 --baseline naive

  # Open loop: 2000 acquisitions/s arrive on schedule whether or not earlier ones are done, at most
  # 64 in flight; latency from each attempt's intended start, service time beside it:
  lockbench run --rate 2000 --arrival poisson --concurrency 64

  # On a private 3-master Redis Cluster; the summary shows how commands spread over the masters:
  lockbench run --topology cluster --keys 10000

  # RedLock-style drivers on 5 independent masters; drivers that cannot are skipped:
  lockbench run --topology masters:5

  # 1ms each way between the clients and Redis (in-process proxies), as in a real deployment:
  lockbench run --net latency=1ms,jitter=200us --concurrency 1 --keys 1

  # Sentinel: a master, 2 replicas and 3 sentinels lockbench starts:
  lockbench run --topology sentinel

  # The same in Docker containers, from an image built here ('lockbench image build'):
  lockbench run --topology sentinel --provider docker --image lockbench/redis:local

  # Hot keys: zipfian key choice over 100 keys, 1ms critical section:
  lockbench run --keys 100 --key-dist zipf --hold 1ms

  # Read-heavy read-write locks: 95% reads over 100 keys (drivers without rw locks are skipped):
  lockbench run --workload rw --read-ratio 0.95 --keys 100 --hold 1ms --driver lockcore

  # MultiLock: 4 distinct keys per acquisition, all or nothing; on a cluster they span slots:
  lockbench run --workload multilock --fanout 4 --keys 1000 --topology cluster --driver lockcore

  # lockcore's lock family side by side: reentrant, fair (FIFO) and fenced (tokens are checked
  # to rise in grant order; out-of-order ones count as violations, and as fencing_violations in the result):
  lockbench run --driver lockcore,lockcore-fair,lockcore-fenced --keys 100 --hold 100us

  # Holders that outlive a 15 ms lease write to a fenced resource on a referee lockbench starts:
  # the lock without tokens corrupts it, lockcore-fenced's stale writes are rejected
  # (docs/protected-resource.md):
  lockbench run --driver unsafe,lockcore-fenced --resource fenced --lease 15ms --hold 45ms --keys 1 --concurrency 4

  # lockcore's RedLock (one client per master, quorum 2) against redsync on 3 masters:
  lockbench run --topology masters:3 --driver lockcore,redsync

  # Attach to an existing Redis instead of starting one (never flushed: between runs lockbench
  # deletes only keys containing --key-prefix):
  lockbench run --addr 127.0.0.1:6379 --key-prefix bench:

  # Attach to an existing cluster (any nodes) or sentinel deployment (the sentinels):
  lockbench run --topology cluster --addr 10.0.0.1:7000,10.0.0.2:7000
  lockbench run --topology sentinel --addr 10.0.0.5:26379 --addr 10.0.0.6:26379 --master-name orders

Each run uses a fresh client and starts from a clean keyspace: on a topology lockbench started
it FLUSHALLs every master between runs; on an attached deployment it never does (see --addr).
A driver that cannot run the workload on the topology is skipped with its reason on stderr and
in the result file; a skip does not fail the run.

Output: a summary table on stdout (medians over the rounds when --repeat > 1; client and Redis
CPU per acquisition next to commands per acquisition; per-node commands on multi-master
topologies), progress on stderr, and in --out: a JSON result file (every repetition its own
run, with a per-second timeline of acquisitions, errors and acquire p99), a benchstat-readable
.bench.txt file, and per run an HdrHistogram .hgrm percentile file and .hlog interval log (see
'lockbench export --help').

Thresholds (--threshold, repeatable) are checked after the runs and listed after the summary:
  lockbench run --driver lockcore,naive --repeat 3 \
    --threshold 'lockcore/naive throughput>=1.5' --threshold 'p99<10ms' --threshold 'violations==0'
An absolute threshold applies to every driver (or to the one named first: 'lockcore p99<2ms') and
looks at the median over the rounds (errors and violations: the total). A ratio compares two
drivers of this run and looks at the median of the per-round ratios: on a loaded CI machine both
drivers of a round slow down together and the ratio holds. Metrics: METRICS.
Latencies and CPU per acquisition need a unit (5ms, 800us).

Exit codes: 0 ok, 1 run failed or safety violations, 2 bad input, 3 a --threshold failed (and
nothing else did), 130 interrupted.
`

func parseRunFlags(args []string, stdout, stderr io.Writer) (*runFlags, int, bool) {
	return parseCommandFlags(commandFlags{name: cmdRun, examples: runExamples}, args, stdout, stderr)
}

// runCommand is lockbench run: the flags become a bench.Spec, run on the deployment they name.
func runCommand(args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseRunFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	ui := progress.New(stderr)
	stopProfiles, ok := profile("run", f, stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfiles()
	// Served before anything is measured: a port in use is bad input. With --procs the
	// processes serve, and this one only checks that their ports are free.
	served, err := bench.ServeMetrics(f.metrics.Spec(f.fleet.Procs), ui)
	if err != nil {
		fmt.Fprintf(stderr, "lockbench run: %v\n", err)
		return exitUsage // before anything was measured
	}
	defer served.Stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := catchInterrupts(interruptedLine(ui, "Ctrl-C again to quit at once"), cancel)
	defer in.release()

	removeNetwork, err := f.gens.startNetwork(ctx, !f.deploy.Attached() && f.deploy.Provider == target.ProviderNative, ui)
	if err != nil {
		fmt.Fprintf(stderr, "lockbench run: %v\n", err)
		return exitFailure
	}
	defer removeNetwork() // after the topology, whose servers it carries

	tgt, file, code := prepare(ctx, cmdRun, f, in, ui, stderr)
	if code != exitOK {
		return code
	}
	defer tgt.close()
	bench.Describe(ctx, tgt.Target, file, f.cfg.Concurrency, ui)
	opts := bench.Options{Reporter: ui, File: file, Metrics: served.Run, Fleet: f.fleetSpec(served)}
	if rs := f.referee.Spec(f.gens.nativeHost(), f.pin.Referee); rs != nil {
		// Before anything is measured: a referee on the deployment under test is refused.
		ref, err := bench.StartReferee(ctx, tgt.Target, *rs, ui)
		if err != nil {
			fmt.Fprintf(stderr, "lockbench run: --referee: %v\n", err)
			if errors.Is(err, bench.ErrBadSpec) {
				return exitUsage
			}
			return exitFailure
		}
		defer ref.Close()
		opts.Referee = ref
	}
	res, err := bench.Run(ctx, tgt.Target, f.benchSpec(), opts)
	if err != nil {
		// The workload refused the configuration (said above), or flags let through a spec
		// bench refuses: usage errors either way.
		if errors.Is(err, bench.ErrBadSpec) {
			fmt.Fprintf(stderr, "lockbench run: %v\n", err)
		}
		return exitUsage
	}
	if len(file.Runs) > 0 {
		if file.Placement != nil {
			fmt.Fprintln(stdout, file.Placement)
		}
		printErrors(stderr, "run", bench.WriteSummary(stdout, file.Runs, f.baseline))
	}
	if len(f.thresholds) > 0 {
		if err := thresholds.WriteReport(stdout, res.Thresholds); err != nil {
			fmt.Fprintf(stderr, "lockbench run: thresholds: %v\n", err)
		}
		if res.ThresholdsFailed > 0 {
			ui.Line("lockbench run: %d of %d thresholds failed", res.ThresholdsFailed, len(res.Thresholds))
		}
	}
	if !writeOutputs("run", f, file, stdout, stderr, ui) {
		return exitFailure
	}
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case res.Failed:
		return exitFailure
	case res.ThresholdsFailed > 0, res.Aborted:
		return exitThresholds
	}
	return exitOK
}

// writeOutputs ends run and sweep alike: the benchstat lines (--benchfmt), then the result files
// (unless --no-results) and the report (--report), when there is anything to write
// (bench.Outputs). It reports whether the files that were asked for were written.
func writeOutputs(cmd string, f *runFlags, file *results.File, stdout, stderr io.Writer, ui *progress.UI) bool {
	if f.benchfmt {
		if err := results.WriteBenchfmt(stdout, file.Runs); err != nil {
			fmt.Fprintf(stderr, "lockbench %s: benchfmt: %v\n", cmd, err)
		}
	}
	out := bench.Outputs{Report: f.report}
	if !f.noResults {
		out.Dir = f.out
	}
	if err := out.Write(file, ui); err != nil {
		fmt.Fprintf(stderr, "lockbench %s: %v\n", cmd, err)
		return false
	}
	return true
}
