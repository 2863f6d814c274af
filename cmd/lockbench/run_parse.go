package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
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
	f := &runFlags{fleet: bench.FleetFlags{Procs: 1}, flagsOnly: flagsOnly(stdout)}
	cfs := newCmdFlagSet(c.name, stderr)
	fs := cfs.FlagSet
	fs.StringSliceVar(&f.drivers, "driver", []string{"naive", "lockcore"}, "lock drivers to compare, comma separated, run interleaved: "+strings.Join(drivers.Names(), ", ")+"; negative control, broken on purpose, never a default: "+strings.Join(drivers.Controls(), ", ")+
		"; reference, not a lock (SET NX PX + DEL, the floor of Redis CPU per acquisition): "+strings.Join(drivers.References(), ", ")+
		"; an external library through an adapter process: exec:NAME=COMMAND (docs/external-drivers.md)"+
		"; a driver's options follow its name, each :key=value, so one run compares settings (e.g. lockcore,lockcore:handoff=0); options:\n"+drivers.OptionsHelp())
	fs.IntVar(&f.repeat, "repeat", 1, "run every driver this many times, interleaved and rotating the order each round (a b c, c a b, b c a, …); the summary shows medians")
	fs.StringVar(&f.baseline, "baseline", "", "driver the summary's throughput and p99 ratios compare with (default: the first --driver)")
	fs.StringVar(&f.workload, "workload", "contention", "workload: "+strings.Join(workloads.Names(), ", "))
	f.cfg.Register(fs)
	fs.DurationVar(&f.lease, "lease", 0, "lock lease; 0 uses each driver's default (lockcore: 30s renewed by the watchdog; lockcore on masters:N, RedLock: "+drivers.LockcoreRedLockDefaultLease.String()+" not renewed)")
	f.deploy.Register(fs)
	fs.StringVar(&f.out, "out", bench.DefaultOut, "directory for result files, relative to the working directory")
	fs.BoolVar(&f.noResults, "no-results", false, "do not write result files")
	fs.StringVar(&f.report, "report", "", "also draw the results as an HTML page and PNG charts in this directory (see 'lockbench report --help')")
	fs.BoolVar(&f.benchfmt, "benchfmt", false, "also print Go benchmark format lines (for benchstat) on stdout")
	fs.StringVar(&f.cpuprof, "cpuprofile", "", "write a CPU profile of lockbench itself to this file (for pprof)")
	fs.StringVar(&f.tracefile, "trace", "", "write a Go execution trace of lockbench itself to this file (for go tool trace: scheduling and network-poller waits)")
	thExprs := fs.StringArray("threshold", nil, "pass/fail condition, repeatable: absolute ('p99<5ms', 'throughput>20000', 'violations==0', 'lockcore p99<2ms') or a ratio of two drivers of this run ('lockcore/naive throughput>=1.5'); medians over rounds, ratios per round; a failed one exits "+strconv.Itoa(exitThresholds))
	if fleetCommand(c.name) {
		f.fleet.Register(fs, c.name == cmdWorker)
		f.collect.Register(fs, c.name == cmdWorker)
		f.referee.Register(fs, c.name == cmdWorker)
		f.exec.add(fs, c.name)
	}
	f.net.Register(fs)
	f.keyspace.add(fs, c.name)
	f.label.add(fs, c.name)
	if c.name == cmdRun {
		f.gens.add(fs)
		f.faultFlags.Register(fs)
		f.scenario.Register(fs)
	}
	f.metrics.Register(fs, c.name == cmdWorker)
	if c.name == cmdRun || c.name == cmdSweep {
		f.abort.Register(fs, c.name == cmdSweep, exitThresholds)
		f.stall.Register(fs)
		f.pin.Register(fs)
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
	var said io.Writer = stderr // which flags a --scenario set
	if f.flagsOnly {
		said = nil
	}
	if err := f.scenario.Apply(fs, said); err != nil {
		return bad("%v", err)
	}
	// A zero on the command line is what the user typed; in a bench.Spec, the default.
	explicit, err := f.benchSpec().Explicit(fs.Changed)
	if err != nil {
		return bad("%v", err)
	}
	f.cfg = explicit.Config
	if err := f.deploy.CheckShape(fs.Changed); err != nil {
		return bad("%v", err)
	}
	if err := f.net.Check(fs); err != nil {
		return bad("%v", err)
	}
	if msg := emptyAddrFlags(fs); msg != "" {
		return bad("%s", msg)
	}
	f.deploy.Offline = f.flagsOnly
	if err := f.deploy.CheckConn(fs, f.net.Conditions != nil); err != nil {
		return bad("%v", err)
	}
	for _, expr := range *thExprs {
		if c.name == cmdSweep {
			f.kneeExprs = append(f.kneeExprs, expr) // gates on knees: sweep.Flags.Check parses them
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
	if err := checkGroups(fs, f, c.name); err != nil {
		return bad("%v", err)
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

// emptyAddrFlags refuses an empty --collect or --referee, which would quietly turn its
// feature off (results by file, no referee), and returns the complaint, or "".
func emptyAddrFlags(fs *pflag.FlagSet) string {
	for _, name := range []string{"collect", "referee"} {
		if fl := fs.Lookup(name); fl != nil && fs.Changed(name) && strings.TrimSpace(fl.Value.String()) == "" {
			return "--" + name + " is empty (an unset variable?): give its address, or leave --" + name + " out"
		}
	}
	return ""
}

// checkGroups runs the checks of the flag groups command has, after run's own, each given what
// it needs of the others, and returns the first complaint, or nil.
func checkGroups(fs *pflag.FlagSet, f *runFlags, command string) error {
	attached, worker, sweep := f.deploy.Attached(), command == cmdWorker, command == cmdSweep
	var checks []func() error
	if fleetCommand(command) {
		checks = append(checks, func() error { return f.fleet.Check(fs, worker, f.net.String()) })
		if worker {
			checks = append(checks, func() error { return checkWorker(fs, f) })
		}
		checks = append(checks, func() error { return f.collect.Check(worker, f.fleet.Procs) },
			func() error { return f.referee.CheckResource(worker, f.workload) }, // before the referee's: it may ask for one
			func() error { f.drivers = f.exec.drivers(command, f.drivers); return nil },
			func() error { return f.referee.Default(worker, f.drivers) },
			func() error { return f.referee.Check(worker) })
	}
	if command == cmdRun {
		checks = append(checks, func() error { return f.faultFlags.Check(f.faultCheck()) },
			func() error { return checkGenerators(fs, f) })
	}
	checks = append(checks, func() error {
		procs := f.fleet.Procs
		if command != cmdRun {
			procs = 1 // a worker's --procs is the run's; it serves on its own address
		}
		return f.metrics.Check(fs, procs)
	})
	if command == cmdRun || sweep {
		checks = append(checks, func() error { return f.abort.Check(fs, sweep, f.thresholds, f.fleet.Procs) },
			func() error { return f.pin.Check(fs, f.deploy.Shape, attached) }, f.label.check)
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkWorker returns what is wrong with the spec a worker's flags make
// (bench.WorkerSpec.Validate), then what a worker does not do (bench.Spec.ForWorker), or nil.
func checkWorker(fs *pflag.FlagSet, f *runFlags) error {
	if err := f.workerSpec().Validate(); err != nil {
		return err
	}
	return f.benchSpec().ForWorker(fs.Changed("provider") || fs.Changed("image"))
}

// checkGenerators checks --generators and, for docker, what the containers cannot do: reach
// this host's loopback or read its files. It gives them a native referee when none is named
// (containers share no memory: without one, nothing checks mutual exclusion across them).
func checkGenerators(fs *pflag.FlagSet, f *runFlags) error {
	if err := f.gens.check(fs); err != nil || !f.gens.docker() {
		return err
	}
	if f.referee.Addr == "" {
		f.referee.Addr = bench.NativeReferee
	}
	c := bench.DockerCheck{Provider: f.deploy.Provider, Topology: f.deploy.Shape, Secure: f.deploy.StartSecure, Net: f.net.Conditions != nil,
		Profiles: f.cpuprof != "" || f.tracefile != "", Metrics: f.metrics.Addr != "", ConnArgs: f.deploy.ChildArgs,
		Referee: f.referee.Addr, Collect: f.collect.Addr, Addrs: f.deploy.Addrs}
	if err := c.Check(); err != nil {
		return err
	}
	return bench.CheckGeneratorImage(f.gens.image, f.flagsOnly)
}
