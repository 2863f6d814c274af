package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/lockbench/lockbench/workloads"
	"github.com/spf13/pflag"
)

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

// parseCommandFlags registers the flags of command c (run's, its groups', c's own), parses args
// and checks them, group by group, then the specs they make. On false it has said why, or
// shown the help, and the int is the exit code.
func parseCommandFlags(c commandFlags, args []string, stdout, stderr io.Writer) (*runFlags, int, bool) {
	f := &runFlags{fleet: fleetFlags{procs: 1}, flagsOnly: flagsOnly(stdout)}
	cfs := newCmdFlagSet(c.name, stderr)
	fs := cfs.FlagSet
	fs.StringSliceVar(&f.drivers, "driver", []string{"naive", "lockcore"}, "lock drivers to compare, comma separated, run interleaved: "+strings.Join(drivers.Names(), ", ")+"; negative control, broken on purpose, never a default: "+strings.Join(drivers.Controls(), ", ")+
		"; reference, not a lock (SET NX PX + DEL, the floor of Redis CPU per acquisition): "+strings.Join(drivers.References(), ", ")+
		"; an external library through an adapter process: exec:NAME=COMMAND (docs/external-drivers.md)"+
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
	fs.StringVar(&f.provider, "provider", target.ProviderNative, "how lockbench starts the topology: native (redis-server processes from PATH) or docker")
	fs.StringVar(&f.image, "image", docker.DefaultImage, "Redis image for --provider docker ('lockbench image build' makes "+docker.LocalImage+" from this machine's redis-server)")
	fs.StringSliceVar(&f.addrs, "addr", nil, "attach to an existing deployment of --topology instead of starting one, repeatable or comma separated: host:port, redis://[user@]host[:port][/db], rediss://… (TLS) or unix:///path (single, masters:N); the server (single), the sentinels (sentinel), any nodes (cluster), every master (masters:N). lockbench never FLUSHALLs it: before, between and after runs it deletes only the keys of its own shapes for --key-prefix (SCAN on every master, each key checked against the exact shapes), and a run refuses to start over such keys already there (see --clean-existing)")
	f.conn.add(fs)
	fs.StringVar(&f.out, "out", bench.DefaultOut, "directory for result files, relative to the working directory")
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
		f.exec.add(fs, c.name)
	}
	f.net.add(fs)
	f.keyspace.add(fs, c.name)
	f.label.add(fs, c.name)
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

	bad := func(format string, a ...any) (*runFlags, int, bool) { return nil, cfs.bad(format, a...), false }
	if err := fs.Parse(args); err != nil {
		return bad("%v", err)
	}
	if *help {
		fmt.Fprintf(stdout, "Usage: lockbench %s [flags]\n\nFlags:\n%s%s", c.name, fs.FlagUsages(), strings.Replace(c.examples, "METRICS", results.MetricNames(), 1))
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
	// A zero on the command line is what the user typed; in a bench.Spec, the default.
	explicit, err := f.benchSpec().Explicit(fs.Changed)
	if err != nil {
		return bad("%v", err)
	}
	f.cfg = explicit.Config
	spec, err := target.ParseTopology(f.topology, f.masterName, fs.Changed("master-name"))
	if err != nil {
		return bad("%v", err)
	}
	f.spec = spec
	if err := target.CheckProvider(f.provider, f.image, len(f.addrs) > 0, fs.Changed); err != nil {
		return bad("%v", err)
	}
	if msg := f.net.check(fs); msg != "" {
		return bad("%s", msg)
	}
	f.conn.noFiles = f.flagsOnly
	if msg := f.conn.check(fs, f.addrs, spec, f.net.cond != nil); msg != "" {
		return bad("%s", msg)
	}
	for _, expr := range *thExprs {
		if c.name == cmdSweep {
			f.kneeExprs = append(f.kneeExprs, expr) // gates on knees: sweepFlags.check parses them
			continue
		}
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

// checkGroups runs the checks of the flag groups command has, after run's own, each given what
// it needs of the others, and returns the first complaint, or "".
func checkGroups(fs *pflag.FlagSet, f *runFlags, command string) string {
	attached := len(f.addrs) > 0
	var checks []func() string
	if fleetCommand(command) {
		checks = append(checks, func() string { return f.fleet.check(fs, command, f.net.String()) })
		if command == cmdWorker {
			checks = append(checks, func() string { return checkWorker(fs, f) })
		}
		checks = append(checks, func() string { return f.collect.check(command, f.fleet.procs) },
			func() string { return f.resource.check(command, f.workload, &f.referee) }, // before the referee's: it may ask for one
			func() string { f.drivers = f.exec.drivers(command, f.drivers); return "" },
			func() string { return f.referee.defaultFor(command, f.drivers) },
			func() string { return f.referee.check(command) })
	}
	if command == cmdRun {
		checks = append(checks, func() string {
			return f.faultFlags.check(f.faultCheck())
		}, func() string { return checkGenerators(fs, f) })
	}
	checks = append(checks, func() string { return f.metrics.check(fs, command, f.fleet.procs) })
	if command == cmdRun || command == cmdSweep {
		checks = append(checks, func() string { return f.abort.check(fs, command, f.thresholds, f.fleet.procs) },
			func() string { return f.pin.check(fs, f.spec, attached) }, f.label.check)
	}
	for _, check := range checks {
		if msg := check(); msg != "" {
			return msg
		}
	}
	return ""
}

// checkWorker returns what is wrong with the spec a worker's flags make
// (bench.WorkerSpec.Validate), then what a worker does not do (bench.Spec.ForWorker), or "".
func checkWorker(fs *pflag.FlagSet, f *runFlags) string {
	if err := f.workerSpec().Validate(); err != nil {
		return err.Error()
	}
	if err := f.benchSpec().ForWorker(fs.Changed("provider") || fs.Changed("image")); err != nil {
		return err.Error()
	}
	return ""
}

// checkGenerators checks --generators and, for docker, what the containers cannot do: reach
// this host's loopback or read its files. It gives them a native referee when none is named
// (containers share no memory: without one, nothing checks mutual exclusion across them).
func checkGenerators(fs *pflag.FlagSet, f *runFlags) string {
	if msg := f.gens.check(fs); msg != "" || !f.gens.docker() {
		return msg
	}
	if f.referee.addr == "" {
		f.referee.addr = bench.NativeReferee
	}
	c := bench.DockerCheck{Provider: f.provider, Topology: f.spec, Secure: f.conn.startSecure, Net: f.net.cond != nil,
		Profiles: f.cpuprof != "" || f.tracefile != "", Metrics: f.metrics.addr != "", ConnArgs: f.conn.child,
		Referee: f.referee.addr, Collect: f.collect.addr, Addrs: f.addrs}
	if err := c.Check(); err != nil {
		return err.Error()
	}
	if err := bench.CheckGeneratorImage(f.gens.image, f.flagsOnly); err != nil {
		return err.Error()
	}
	return ""
}
