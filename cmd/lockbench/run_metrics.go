package main

import (
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/metrics"
	"github.com/lockbench/lockbench/progress"
	"github.com/lockbench/lockbench/workloads"
	"github.com/spf13/pflag"
)

// metricsFlags are --metrics-addr and --metrics-linger (run, sweep, worker), and the worker's
// hidden flags by which a --procs parent gives its processes the run's id and round.
type metricsFlags struct {
	addr   string
	linger time.Duration
	runID  string
	round  int

	served *bench.Metrics // after start
}

func (m *metricsFlags) add(fs *pflag.FlagSet, cmd string) {
	fs.StringVar(&m.addr, "metrics-addr", "", "serve Prometheus metrics on HOST:PORT while running (e.g. 127.0.0.1:9464; an empty host is refused: 0.0.0.0:PORT exposes them on purpose, with a warning); with --procs N, generator process i serves on PORT+i instead (see docs/metrics.md)")
	fs.DurationVar(&m.linger, "metrics-linger", 0, "with --metrics-addr: keep serving this long after the last run, so that Prometheus scrapes the final figures")
	if cmd == cmdWorker {
		fs.StringVar(&m.runID, "metrics-run-id", "", "run_id label of the metrics (lockbench run --procs passes its own)")
		fs.IntVar(&m.round, "metrics-round", 1, "round label of the metrics (lockbench run --procs passes the round)")
		_ = fs.MarkHidden("metrics-run-id")
		_ = fs.MarkHidden("metrics-round")
	}
}

// check returns what is wrong with the flags of cmd, with procs generator processes, or "".
func (m *metricsFlags) check(fs *pflag.FlagSet, cmd string, procs int) string {
	if m.addr == "" {
		if fs.Changed("metrics-linger") {
			return "--metrics-linger needs --metrics-addr"
		}
		return ""
	}
	if cmd != cmdRun {
		procs = 1 // a worker's --procs is the run's; it serves on its own address
	}
	if err := (bench.MetricsSpec{Addr: m.addr, Linger: m.linger, Procs: procs}).Check(); err != nil {
		return err.Error()
	}
	return ""
}

// start serves the metrics (bench.ServeMetrics), before anything is measured: a port in use is
// bad input. With --procs (procs > 1) the processes serve (each on PORT+index) and this one only
// checks that the ports are free. It reports what went wrong, for exit code 2.
func (m *metricsFlags) start(procs int, ui *progress.UI) error {
	s, err := bench.ServeMetrics(bench.MetricsSpec{Addr: m.addr, RunID: m.runID, Linger: m.linger, Procs: procs}, ui)
	m.served = s
	return err
}

// stop lingers (--metrics-linger) and closes the server, if one runs.
func (m *metricsFlags) stop() { m.served.Stop() }

// runMetrics is the bench.Options.Metrics of lockbench run and sweep: a run's live figures go
// to the Prometheus exporter, when one is served.
func (m *metricsFlags) runMetrics(l metrics.Labels) func(workloads.Live) { return m.served.Run(l) }
