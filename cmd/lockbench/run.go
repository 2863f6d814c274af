package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/target"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/lockbench/lockbench/workloads"
	"github.com/spf13/pflag"
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

// runFlags are the parsed flags of lockbench run.
type runFlags struct {
	drivers    []string
	workload   string
	cfg        workloads.Config
	lease      time.Duration
	repeat     int
	baseline   string
	topology   string
	spec       compose.Spec
	masterName string
	provider   string
	image      string
	addrs      []string
	out        string
	report     string
	benchfmt   bool
	noResults  bool
	cpuprof    string
	tracefile  string
	thresholds []thresholds.Threshold
	fleet      fleetFlags     // --procs, and lockbench worker's own flags (fleet.go)
	gens       generatorFlags // --generators docker (run_generators.go)
	net        netFlag        // --net (run_net.go)
	conn       connFlags      // --user, --password-file, --tls… (run_conn.go)
	faultFlags faultFlags     // run's --fault and --timeline-interval (run_faults.go)
	metrics    metricsFlags   // --metrics-addr, --metrics-linger (run_metrics.go)
	abort      abortFlags     // --abort-on-fail, --abort-after (run_abort.go)
	stall      stallFlags     // --stall-threshold, --allow-stalls (run_stall.go)
	pin        pinFlags       // --pin, --server-cpus, --client-cpus (run_pin.go)
	collect    collectFlags   // --collect, the worker's --run (run_collect.go)
	referee    refereeFlags   // --referee (run_referee.go)
	resource   resourceFlags  // --resource (run_resource.go)
	keyspace   keyspaceFlags  // --clean-existing (run_keyspace.go)
	// flagsOnly: parse and check, make no directory and read no file (see parseOnly).
	flagsOnly bool
	scenario  string // --scenario (run_scenario.go)
}

func parseRunFlags(args []string, stdout, stderr io.Writer) (*runFlags, int, bool) {
	return parseCommandFlags(commandFlags{name: cmdRun, examples: runExamples}, args, stdout, stderr)
}

// parseRunFlagsAs parses the flags of lockbench run, or of lockbench worker, which takes the
// same flags and its own (see fleetFlags).
func parseRunFlagsAs(cmd string, args []string, stdout, stderr io.Writer) (*runFlags, int, bool) {
	return parseCommandFlags(commandFlags{name: cmd, examples: runExamples}, args, stdout, stderr)
}

// commandFlags lets another command (sweep, worker) take run's flags and checks, plus its own.
type commandFlags struct {
	name, examples string
	// add defines the command's own flags (and may hide run's that do not apply); check
	// validates them after run's checks, with run's flags parsed into f.
	add   func(fs *pflag.FlagSet)
	check func(fs *pflag.FlagSet, f *runFlags) error
}

// fleetCommand says whether command takes the fleet flags: run's --procs, or the worker's own.
func fleetCommand(name string) bool { return name == cmdRun || name == cmdWorker }

func parseCommandFlags(c commandFlags, args []string, stdout, stderr io.Writer) (*runFlags, int, bool) {
	f := &runFlags{fleet: fleetFlags{procs: 1}, flagsOnly: flagsOnly(stdout)}
	fs := pflag.NewFlagSet("lockbench "+c.name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.StringSliceVar(&f.drivers, "driver", []string{"naive", "lockcore"}, "lock drivers to compare, comma separated, run interleaved: "+strings.Join(drivers.Names(), ", ")+"; negative control, broken on purpose, never a default: "+strings.Join(drivers.Controls(), ", ")+
		"; a driver's options follow its name, each :key=value, so one run compares settings (e.g. lockcore,lockcore:handoff=0); options:\n"+drivers.OptionsHelp())
	fs.IntVar(&f.repeat, "repeat", 1, "run every driver this many times, interleaved and rotating the order each round (a b c, c a b, b c a, …); the summary shows medians")
	fs.StringVar(&f.baseline, "baseline", "", "driver the summary's throughput and p99 ratios compare with (default: the first --driver)")
	fs.StringVar(&f.workload, "workload", "contention", "workload: "+strings.Join(workloads.Names(), ", "))
	fs.IntVar(&f.cfg.Concurrency, "concurrency", workloads.DefaultConcurrency, "closed-loop workers, each its own lock owner; with --rate, the cap on attempts in flight")
	fs.IntVar(&f.cfg.Keys, "keys", workloads.DefaultKeys, "distinct lock names")
	fs.StringVar(&f.cfg.KeyDist, "key-dist", workloads.DefaultKeyDist, "key choice: uniform or zipf")
	fs.Float64Var(&f.cfg.ZipfS, "zipf-s", workloads.DefaultZipfS, "zipf exponent (> 1) for --key-dist zipf")
	fs.DurationVar(&f.cfg.Hold, "hold", 0, "time a lock is held before release (critical section)")
	fs.Float64Var(&f.cfg.ReadRatio, "read-ratio", workloads.DefaultReadRatio, "share of cycles that take a read hold, 0 to 1, for --workload rw (the rest write)")
	fs.IntVar(&f.cfg.Fanout, "fanout", workloads.DefaultFanout, "distinct keys each cycle locks at once, all or nothing, 1 to --keys, for --workload multilock")
	fs.Float64Var(&f.cfg.Rate, "rate", 0, "open loop: start attempts on a schedule of this many acquisitions/s over all workers, latency measured from each one's intended start (default: closed loop)")
	fs.StringVar(&f.cfg.Arrival, "arrival", "", "open-loop arrivals, with --rate: uniform (evenly spaced, the default) or poisson (exponential gaps, seeded by --seed)")
	fs.IntVar(&f.cfg.Depth, "depth", workloads.DefaultDepth, "nesting depth of --workload reentrancy: the same owner takes the lock this many times, then releases it as many, 1 to "+strconv.Itoa(workloads.MaxDepth))
	fs.DurationVar(&f.cfg.Duration, "duration", workloads.DefaultDuration, "length of the measured phase per run")
	fs.DurationVar(&f.cfg.Warmup, "warmup", workloads.DefaultWarmup, "unrecorded warm-up per run before measuring (0s: none)")
	fs.Int64Var(&f.cfg.Seed, "seed", workloads.DefaultSeed, "seed for key choices; equal seeds give equal key sequences")
	fs.StringVar(&f.cfg.KeyPrefix, "key-prefix", workloads.DefaultKeyPrefix, "prefix of every lock name (lock names are the prefix and a number); on an attached deployment (--addr) lockbench deletes only the keys of its own shapes for it (the locks, e.g. lockbench:7, and their helper keys: see docs/topologies.md), never a key that merely contains it, and refuses a prefix shorter than 3 characters or one that begins keys that are not lockbench's")
	fs.DurationVar(&f.lease, "lease", 0, "lock lease; 0 uses each driver's default (lockcore: 30s renewed by the watchdog; lockcore on masters:N, RedLock: "+drivers.LockcoreRedLockDefaultLease.String()+" not renewed)")
	fs.StringVar(&f.topology, "topology", compose.KindSingle, "deployment shape: single, sentinel, cluster or masters:N (N independent masters, 1 to "+strconv.Itoa(compose.MaxMasters)+"); started for the run unless --addr is given")
	fs.StringVar(&f.masterName, "master-name", "", "sentinel master name, for --topology sentinel (default "+compose.DefaultMasterName+")")
	fs.StringVar(&f.provider, "provider", providerNative, "how lockbench starts the topology: native (redis-server processes from PATH) or docker")
	fs.StringVar(&f.image, "image", docker.DefaultImage, "Redis image for --provider docker ('lockbench image build' makes "+docker.LocalImage+" from this machine's redis-server)")
	fs.StringSliceVar(&f.addrs, "addr", nil, "attach to an existing deployment of --topology instead of starting one, repeatable or comma separated: host:port, redis://[user@]host[:port][/db], rediss://… (TLS) or unix:///path (single, masters:N); the server (single), the sentinels (sentinel), any nodes (cluster), every master (masters:N). lockbench never FLUSHALLs it: before, between and after runs it deletes only the keys of its own shapes for --key-prefix (SCAN on every master, each key checked against the exact shapes), and a run refuses to start over such keys already there (see --clean-existing)")
	f.conn.add(fs)
	fs.StringVar(&f.out, "out", "results", "directory for result files")
	fs.BoolVar(&f.noResults, "no-results", false, "do not write result files")
	fs.StringVar(&f.report, "report", "", "also draw the results as an HTML page and PNG charts in this directory (see 'lockbench report --help')")
	fs.BoolVar(&f.benchfmt, "benchfmt", false, "also print Go benchmark format lines (for benchstat) on stdout")
	fs.StringVar(&f.cpuprof, "cpuprofile", "", "write a CPU profile of lockbench itself to this file (for pprof)")
	fs.StringVar(&f.tracefile, "trace", "", "write a Go execution trace of lockbench itself to this file (for go tool trace: scheduling and network-poller waits)")
	thExprs := fs.StringArray("threshold", nil, "pass/fail condition, repeatable: absolute ('p99<5ms', 'throughput>20000', 'violations==0', 'lockcore p99<2ms') or a ratio of two drivers of this run ('lockcore/naive throughput>=1.5'); medians over rounds, ratios per round; a failed one exits "+strconv.Itoa(exitThresholds))
	if fleetCommand(c.name) {
		addFleetFlags(fs, &f.fleet, c.name)
		f.collect.add(fs, c.name)
		f.referee.add(fs, c.name)
		f.resource.add(fs, c.name)
	}
	f.net.add(fs)
	f.keyspace.add(fs, c.name)
	if c.name == cmdRun {
		f.gens.add(fs)
		addFaultFlags(fs, &f.faultFlags)
		addScenarioFlag(fs, &f.scenario)
	}
	f.metrics.add(fs, c.name)
	if c.name == cmdRun || c.name == cmdSweep {
		f.abort.add(fs, c.name)
		f.stall.add(fs)
		f.pin.add(fs)
	}
	help := fs.BoolP("help", "h", false, "show this help")
	if c.add != nil {
		c.add(fs)
	}

	bad := func(format string, a ...any) (*runFlags, int, bool) {
		fmt.Fprintf(stderr, "lockbench "+c.name+": "+format+"\nRun 'lockbench "+c.name+" --help' for usage.\n", a...)
		return nil, exitUsage, false
	}
	if err := fs.Parse(args); err != nil {
		return bad("%v", err)
	}
	if *help {
		fmt.Fprintf(stdout, "Usage: lockbench %s [flags]\n\nFlags:\n%s%s", c.name, fs.FlagUsages(), fleetHelp(c.name, strings.Replace(c.examples, "METRICS", results.MetricNames(), 1)))
		return nil, exitOK, false
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if f.scenario != "" {
		var w io.Writer = stderr
		if f.flagsOnly {
			w = nil
		}
		if err := applyScenario(fs, f.scenario, w); err != nil {
			return bad("%v", err)
		}
	}
	// Zero means "default" inside workloads.Config; on the command line it is a mistake.
	if f.cfg.Concurrency < 1 {
		return bad("--concurrency %d must be at least 1", f.cfg.Concurrency)
	}
	if f.cfg.Keys < 1 {
		return bad("--keys %d must be at least 1", f.cfg.Keys)
	}
	if f.cfg.Duration <= 0 {
		return bad("--duration %v must be positive", f.cfg.Duration)
	}
	if msg := checkPacing(fs.Changed("rate"), f.cfg.Rate, f.cfg.Arrival); msg != "" {
		return bad("%s", msg)
	}
	if !fs.Changed("warmup") && f.cfg.Warmup == 0 {
		f.cfg.Warmup = workloads.DefaultWarmup
	} else if f.cfg.Warmup == 0 {
		f.cfg.Warmup = -1 // explicit --warmup 0s: no warm-up
	}
	if !(f.cfg.ReadRatio >= 0 && f.cfg.ReadRatio <= 1) { // NaN too
		return bad("--read-ratio %v: want 0 to 1", f.cfg.ReadRatio)
	}
	if f.cfg.ReadRatio == 0 {
		f.cfg.ReadRatio = -1 // explicit --read-ratio 0: writes only; 0 in workloads.Config is the default
	}
	if fs.Changed("fanout") {
		if f.cfg.Fanout < 1 || f.cfg.Fanout > min(f.cfg.Keys, workloads.MaxFanout) {
			return bad("--fanout %d: want 1 to %d (--keys %d, at most %d)", f.cfg.Fanout, min(f.cfg.Keys, workloads.MaxFanout), f.cfg.Keys, workloads.MaxFanout)
		}
	} else {
		f.cfg.Fanout = 0 // the default, or --keys if fewer
	}
	if f.repeat < 1 || f.repeat > bench.MaxRepeat {
		return bad("--repeat %d: want 1 to %d", f.repeat, bench.MaxRepeat)
	}
	if strings.TrimSpace(f.cfg.KeyPrefix) == "" {
		return bad("--key-prefix must not be empty: it keeps lockbench's keys apart from yours")
	}
	if f.cfg.Depth < 1 || f.cfg.Depth > workloads.MaxDepth {
		return bad("--depth %d: want 1 to %d", f.cfg.Depth, workloads.MaxDepth)
	}
	spec, err := topologySpec(fs, f.topology, f.masterName)
	if err != nil {
		return bad("%v", err)
	}
	f.spec = spec
	switch f.provider {
	case providerNative, providerDocker:
	default:
		return bad("--provider %q: want native or docker", f.provider)
	}
	if fs.Changed("provider") && len(f.addrs) > 0 {
		return bad("--provider says how lockbench starts a topology; with --addr it attaches to yours instead")
	}
	if fs.Changed("image") {
		if f.provider != providerDocker {
			return bad("--image is for --provider docker")
		}
		if err := checkImageRef(f.image); err != nil {
			return bad("--image: %v", err)
		}
	}
	if msg := f.net.check(fs); msg != "" {
		return bad("%s", msg)
	}
	f.conn.noFiles = f.flagsOnly
	if msg := f.conn.check(fs, f.addrs, spec, f.net.cond != nil); msg != "" {
		return bad("%s", msg)
	}
	for _, expr := range *thExprs {
		th, err := thresholds.Parse(expr)
		if err != nil {
			return bad("--threshold: %v", strings.TrimPrefix(err.Error(), thresholds.ErrBadThreshold.Error()+" "))
		}
		f.thresholds = append(f.thresholds, th)
	}
	// The domain's checks (drivers, baseline, workload, the thresholds' drivers, the workload's
	// configuration) are bench's; the ones above are the command line's: a zero there is a
	// mistake, in a bench.Spec the default.
	if err := f.benchSpec().Validate(); err != nil {
		return bad("%v", err)
	}
	if f.baseline == "" {
		f.baseline = f.drivers[0]
	}
	if msg := checkGroups(fs, f, c.name); msg != "" {
		return bad("%s", msg)
	}
	if c.check != nil {
		if err := c.check(fs, f); err != nil {
			return bad("%v", err)
		}
	}
	if f.flagsOnly {
		return nil, exitOK, false // parseOnly: checked, and nothing to run
	}
	if msg := f.checkReportDir(); msg != "" {
		return bad("%s", msg)
	}
	return f, exitOK, true
}

// checkReportDir makes sure --report can be written, before minutes of running rather than
// after, and returns the complaint, or "".
func (f *runFlags) checkReportDir() string {
	if f.report == "" {
		return ""
	}
	if err := report.CheckDir(f.report); err != nil {
		return fmt.Sprintf("--report %s: cannot write there: %v", f.report, err)
	}
	return ""
}

// checkGroups runs the checks of the flag groups command has (fleet, faults, metrics, abort),
// after run's own, and returns the first complaint, or "".
func checkGroups(fs *pflag.FlagSet, f *runFlags, command string) string {
	var checks []func() string
	if fleetCommand(command) {
		checks = append(checks, func() string { return checkFleetFlags(fs, f, command) },
			func() string { return f.collect.check(f, command) },
			func() string { return f.resource.check(f, command) }, // before the referee's: it may ask for one
			func() string { return f.referee.check(f, command) })
	}
	if command == cmdRun {
		checks = append(checks, func() string { return checkFaultFlags(f) })
		checks = append(checks, func() string { return f.gens.check(fs, f) })
	}
	checks = append(checks, func() string { return f.metrics.check(fs, f, command) })
	if command == cmdRun || command == cmdSweep {
		checks = append(checks, func() string { return f.abort.check(fs, f, command) })
		checks = append(checks, f.stall.check)
		checks = append(checks, func() string { return f.pin.check(fs, f) })
	}
	for _, check := range checks {
		if msg := check(); msg != "" {
			return msg
		}
	}
	return ""
}

func runCommand(args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseRunFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	ui := newProgressUI(stderr)
	stopProfiles, ok := profile("run", f, stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfiles()
	if err := f.metrics.start(f, cmdRun, ui); err != nil {
		fmt.Fprintf(stderr, "lockbench run: %v\n", err)
		return exitUsage // before anything was measured
	}
	defer f.metrics.stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := catchInterrupts(interruptedLine(ui, "Ctrl-C again to quit at once"), cancel)
	defer in.release()

	removeNetwork, err := f.gens.startNetwork(ctx, f, ui) // run_generators.go
	if err != nil {
		fmt.Fprintf(stderr, "lockbench run: %v\n", err)
		return exitFailure
	}
	defer removeNetwork() // after the topology, whose servers it carries

	tgt, err := startTopology(ctx, f, ui, func(t compose.Topology) { in.onHardStop(func() { t.Close() }) })
	if err != nil {
		fmt.Fprintf(stderr, "lockbench run: %v\n", err)
		switch {
		case ctx.Err() != nil:
			return exitInterrupted
		case errors.Is(err, target.ErrBadSpec):
			return exitUsage // --addr does not fit --topology, or refuses the credentials or TLS: nothing was run
		}
		return exitFailure
	}
	defer tgt.close()
	if msg := checkAttachedFaults(f, tgt); msg != "" {
		fmt.Fprintf(stderr, "lockbench run: %s\n", msg)
		return exitUsage // nothing was measured
	}
	if !tgt.prefixAllowed(ctx, "run", f.cfg.KeyPrefix, ui, stderr) {
		return exitUsage // nothing was measured
	}

	file := results.NewFile(version, conn.RedactArgs(os.Args))
	if msg, code := checkAttachedKeyspace(ctx, f, tgt, file, ui); msg != "" {
		fmt.Fprintf(stderr, "lockbench run: %s\n", msg)
		return code // before anything ran or was deleted
	}
	bench.Describe(ctx, tgt.Target, file, f.cfg.Concurrency, ui)
	file.Placement = f.pin.placement
	opts := bench.Options{Reporter: ui, File: file, Metrics: f.metrics.runMetrics, Fleet: f.fleetSpec(f.metrics.served)}
	if rs := f.refereeSpec(); rs != nil {
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
			ui.line("lockbench run: %d of %d thresholds failed", res.ThresholdsFailed, len(res.Thresholds))
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

// writeOutputs ends run and sweep alike: the benchstat lines (--benchfmt), the result files
// (unless --no-results) and the report (--report), when there is anything to write. It reports
// whether the files that were asked for were written.
func writeOutputs(cmd string, f *runFlags, file *results.File, stdout, stderr io.Writer, ui *progressUI) bool {
	if f.benchfmt {
		if err := results.WriteBenchfmt(stdout, file.Runs); err != nil {
			fmt.Fprintf(stderr, "lockbench %s: benchfmt: %v\n", cmd, err)
		}
	}
	if len(file.Runs) == 0 && len(file.Skipped) == 0 {
		return true
	}
	if !f.noResults {
		if err := bench.WriteFiles(f.out, file, ui); err != nil {
			fmt.Fprintf(stderr, "lockbench %s: writing results: %v\n", cmd, err)
			return false
		}
	}
	if f.report != "" {
		if err := runReport(f.report, file, ui); err != nil {
			fmt.Fprintf(stderr, "lockbench %s: report: %v\n", cmd, err)
			return false
		}
	}
	return true
}

// printErrors prints each of the errors err joins (errors.Join) on its own line, as lockbench
// cmd's.
func printErrors(stderr io.Writer, cmd string, err error) {
	if err == nil {
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "lockbench %s: %v\n", cmd, e)
	}
}

// topologySpec reads --topology and --master-name, as run, sweep, worker and check take them.
func topologySpec(fs *pflag.FlagSet, topology, masterName string) (compose.Spec, error) {
	spec, err := compose.ParseSpec(topology)
	if err != nil {
		return spec, fmt.Errorf("--topology: %v", err)
	}
	if fs.Changed("master-name") {
		if spec.Kind != compose.KindSentinel {
			return spec, fmt.Errorf("--master-name is for --topology sentinel, not %s", spec)
		}
		if strings.TrimSpace(masterName) == "" || strings.ContainsFunc(masterName, unicode.IsSpace) {
			return spec, fmt.Errorf("--master-name %q: want a sentinel master name without spaces", masterName)
		}
		spec.MasterName = masterName
	}
	return spec, nil
}
