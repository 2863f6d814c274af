package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
	"github.com/redis/rueidis"
	"github.com/spf13/pflag"
)

const runExamples = `
Examples:
  # Compare the naive SET NX lock and lockcore on a private redis-server lockbench starts:
  lockbench run

  # The acceptance run: 64 workers over 10000 keys for 10 s, both drivers in one invocation:
  lockbench run --driver lockcore,naive --concurrency 64 --keys 10000 --duration 10s

  # Hot keys: zipfian key choice over 100 keys, 1ms critical section:
  lockbench run --keys 100 --key-dist zipf --hold 1ms

  # Attach to an existing Redis instead of starting one (keys are prefixed, never flushed):
  lockbench run --addr 127.0.0.1:6379 --key-prefix bench:

Output: a summary table on stdout, progress on stderr, a JSON result file and a
benchstat-readable .bench.txt file in --out.
Exit codes: 0 ok, 1 run failed or safety violations, 2 bad input, 130 interrupted.
`

// runFlags are the parsed flags of lockbench run.
type runFlags struct {
	drivers   []string
	workload  string
	cfg       workloads.Config
	lease     time.Duration
	addrs     []string
	out       string
	benchfmt  bool
	noResults bool
	cpuprof   string
}

func parseRunFlags(args []string, stdout, stderr io.Writer) (*runFlags, int, bool) {
	f := &runFlags{}
	fs := pflag.NewFlagSet("lockbench run", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.StringSliceVar(&f.drivers, "driver", []string{"naive", "lockcore"}, "lock drivers to run one after the other, comma separated (ratios compare to the first): "+strings.Join(drivers.Names(), ", "))
	fs.StringVar(&f.workload, "workload", "contention", "workload: "+strings.Join(workloads.Names(), ", "))
	fs.IntVar(&f.cfg.Concurrency, "concurrency", workloads.DefaultConcurrency, "closed-loop workers, each its own lock owner")
	fs.IntVar(&f.cfg.Keys, "keys", workloads.DefaultKeys, "distinct lock names")
	fs.StringVar(&f.cfg.KeyDist, "key-dist", workloads.DefaultKeyDist, "key choice: uniform or zipf")
	fs.Float64Var(&f.cfg.ZipfS, "zipf-s", workloads.DefaultZipfS, "zipf exponent (> 1) for --key-dist zipf")
	fs.DurationVar(&f.cfg.Hold, "hold", 0, "time a lock is held before release (critical section)")
	fs.DurationVar(&f.cfg.Duration, "duration", workloads.DefaultDuration, "length of the measured phase per driver")
	fs.DurationVar(&f.cfg.Warmup, "warmup", workloads.DefaultWarmup, "unrecorded warm-up per driver before measuring (0s: none)")
	fs.Int64Var(&f.cfg.Seed, "seed", workloads.DefaultSeed, "seed for key choices; equal seeds give equal key sequences")
	fs.StringVar(&f.cfg.KeyPrefix, "key-prefix", workloads.DefaultKeyPrefix, "prefix of every lock name")
	fs.DurationVar(&f.lease, "lease", 0, "lock lease; 0 uses each driver's default (lockcore: 30s renewed by the watchdog)")
	fs.StringSliceVar(&f.addrs, "addr", nil, "host:port of an existing Redis to use instead of starting one")
	fs.StringVar(&f.out, "out", "results", "directory for result files")
	fs.BoolVar(&f.noResults, "no-results", false, "do not write result files")
	fs.BoolVar(&f.benchfmt, "benchfmt", false, "also print Go benchmark format lines (for benchstat) on stdout")
	fs.StringVar(&f.cpuprof, "cpuprofile", "", "write a CPU profile of lockbench itself to this file (for pprof)")
	help := fs.BoolP("help", "h", false, "show this help")

	bad := func(format string, a ...any) (*runFlags, int, bool) {
		fmt.Fprintf(stderr, "lockbench run: "+format+"\nRun 'lockbench run --help' for usage.\n", a...)
		return nil, exitUsage, false
	}
	if err := fs.Parse(args); err != nil {
		return bad("%v", err)
	}
	if *help {
		fmt.Fprintf(stdout, "Usage: lockbench run [flags]\n\nFlags:\n%s%s", fs.FlagUsages(), runExamples)
		return nil, exitOK, false
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
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
	if !fs.Changed("warmup") && f.cfg.Warmup == 0 {
		f.cfg.Warmup = workloads.DefaultWarmup
	} else if f.cfg.Warmup == 0 {
		f.cfg.Warmup = -1 // explicit --warmup 0s: no warm-up
	}
	if f.cfg.Warmup < -1 {
		return bad("--warmup %v must not be negative", f.cfg.Warmup)
	}
	if f.lease < 0 {
		return bad("--lease %v must not be negative", f.lease)
	}
	if strings.TrimSpace(f.cfg.KeyPrefix) == "" {
		return bad("--key-prefix must not be empty: it keeps lockbench's keys apart from yours")
	}
	if len(f.drivers) == 0 {
		return bad("--driver needs at least one driver")
	}
	for _, d := range f.drivers {
		if _, err := drivers.Get(d); err != nil {
			return bad("--driver: %v", err)
		}
	}
	w, err := workloads.Get(f.workload)
	if err != nil {
		return bad("--workload: %v", err)
	}
	for _, d := range f.drivers {
		drv, _ := drivers.Get(d)
		if !drv.Kinds().Has(w.Needs()) {
			return bad("driver %s cannot run workload %s (needs %v locks, has %v)", d, f.workload, w.Needs(), drv.Kinds())
		}
	}
	for _, a := range f.addrs {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return bad("--addr %q: want host:port", a)
		}
	}
	cfg := f.cfg
	cfg.Fill()
	if err := cfg.Validate(); err != nil {
		return bad("%v", err)
	}
	return f, exitOK, true
}

func runCommand(args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseRunFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	ui := newProgressUI(stderr)
	if f.cpuprof != "" {
		stop, err := startCPUProfile(f.cpuprof)
		if err != nil {
			fmt.Fprintf(stderr, "lockbench run: --cpuprofile: %v\n", err)
			return exitUsage
		}
		defer stop()
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var hardStop sync.Once
	var stopServer func() = func() {}
	var stopMu sync.Mutex
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		ui.line("interrupted: stopping, writing what was measured (Ctrl-C again to quit at once)")
		cancel()
		if _, ok := <-sigs; ok {
			hardStop.Do(func() {
				stopMu.Lock()
				stopServer()
				stopMu.Unlock()
				os.Exit(exitInterrupted)
			})
		}
	}()

	target := drivers.Config{Topology: "single", Addrs: f.addrs, Lease: f.lease}
	if len(f.addrs) == 0 {
		ui.line("starting a private redis-server (use --addr to attach to an existing Redis)")
		srv, err := compose.StartSingle(ctx, compose.NativeOptions{})
		if err != nil {
			fmt.Fprintf(stderr, "lockbench run: %v\n", err)
			if ctx.Err() != nil {
				return exitInterrupted
			}
			return exitFailure
		}
		stopMu.Lock()
		stopServer = func() { srv.Close() }
		stopMu.Unlock()
		defer srv.Close()
		target.Addrs = srv.Addrs()
		ui.line("redis-server pid %d on %s", srv.Pid(), srv.Addr())
	}

	inspect, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: target.Addrs[:1], DisableCache: true})
	if err != nil {
		fmt.Fprintf(stderr, "lockbench run: cannot connect to %s: %v\n", target.Addrs[0], err)
		return exitFailure
	}
	defer inspect.Close()
	stats := func(ctx context.Context) (results.CommandStats, error) {
		info, err := inspect.Do(ctx, inspect.B().Info().Section("commandstats").Build()).ToString()
		if err != nil {
			return nil, err
		}
		return results.ParseCommandStats(info)
	}

	file := results.NewFile(version, os.Args)
	file.RedisVersion = redisVersion(ctx, inspect)
	w, _ := workloads.Get(f.workload)
	failed := false
	for i, name := range f.drivers {
		if ctx.Err() != nil {
			ui.line("skipping %s: interrupted", name)
			continue
		}
		drv, _ := drivers.Get(name)
		ui.line("[%d/%d] %s: %s, %d workers, %d keys (%s), warm-up %v, measuring %v",
			i+1, len(f.drivers), name, f.workload, f.cfg.Concurrency, f.cfg.Keys, f.cfg.KeyDist, max(f.cfg.Warmup, 0), f.cfg.Duration)
		run, err := workloads.Run(ctx, workloads.Plan{
			Workload:     w,
			Config:       f.cfg,
			Driver:       drv,
			Target:       target,
			CommandStats: stats,
			Progress:     ui.progress,
		})
		ui.clear()
		if err != nil {
			failed = true
			fmt.Fprintf(stderr, "lockbench run: %s: %v\n", name, err)
			if errors.Is(err, workloads.ErrBadConfig) {
				return exitUsage
			}
			continue
		}
		if run.Errors > 0 {
			failed = true
			fmt.Fprintf(stderr, "lockbench run: %s: %d errors %v\n", name, run.Errors, run.ErrorsByKind)
		}
		if run.Violations > 0 {
			failed = true
			fmt.Fprintf(stderr, "lockbench run: %s: SAFETY: %d mutual-exclusion violations (two holders of one lock at once)\n", name, run.Violations)
		}
		file.Runs = append(file.Runs, run)
	}
	file.Complete = ctx.Err() == nil && !failed
	for _, r := range file.Runs {
		file.Complete = file.Complete && r.Complete
	}

	if err := results.WriteSummary(stdout, file.Runs); err != nil {
		fmt.Fprintf(stderr, "lockbench run: summary: %v\n", err)
	}
	if f.benchfmt {
		if err := results.WriteBenchfmt(stdout, file.Runs); err != nil {
			fmt.Fprintf(stderr, "lockbench run: benchfmt: %v\n", err)
		}
	}
	if !f.noResults && len(file.Runs) > 0 {
		if err := writeResults(f.out, file, ui); err != nil {
			fmt.Fprintf(stderr, "lockbench run: writing results: %v\n", err)
			return exitFailure
		}
	}
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case failed:
		return exitFailure
	}
	return exitOK
}

// writeResults writes the JSON result file and, beside it, the benchstat lines.
func writeResults(dir string, file *results.File, ui *progressUI) error {
	path, err := results.WriteFile(dir, file)
	if err != nil {
		return err
	}
	ui.line("results: %s", path)
	bench, err := os.Create(strings.TrimSuffix(path, filepath.Ext(path)) + ".bench.txt")
	if err != nil {
		return err
	}
	if err := results.WriteBenchfmt(bench, file.Runs); err != nil {
		bench.Close()
		return err
	}
	if err := bench.Close(); err != nil {
		return err
	}
	ui.line("benchstat lines: %s", bench.Name())
	return nil
}

func redisVersion(ctx context.Context, rdb rueidis.Client) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := rdb.Do(ctx, rdb.B().Info().Section("server").Build()).ToString()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return ""
}
