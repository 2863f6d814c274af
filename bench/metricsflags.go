package bench

import (
	"time"

	"github.com/spf13/pflag"
)

// MetricsFlags are --metrics-addr and --metrics-linger (lockbench run, sweep and worker), and
// the worker's hidden flags by which a --procs parent gives its processes the run's id and
// round. Spec is the MetricsSpec they make; Worker, a worker's WorkerMetrics. A MetricsFlags is
// used by one goroutine.
type MetricsFlags struct {
	Addr   string
	Linger time.Duration
	RunID  string // the worker's --metrics-run-id
	Round  int    // the worker's --metrics-round
}

// Register adds the flags to fs, with the worker's own when worker is set.
func (m *MetricsFlags) Register(fs *pflag.FlagSet, worker bool) {
	fs.StringVar(&m.Addr, "metrics-addr", "", "serve Prometheus metrics on HOST:PORT while running (e.g. 127.0.0.1:9464; an empty host is refused: 0.0.0.0:PORT exposes them on purpose, with a warning); with --procs N, generator process i serves on PORT+i instead (see docs/metrics.md)")
	fs.DurationVar(&m.Linger, "metrics-linger", 0, "with --metrics-addr: keep serving this long after the last run, so that Prometheus scrapes the final figures")
	if worker {
		fs.StringVar(&m.RunID, "metrics-run-id", "", "run_id label of the metrics (lockbench run --procs passes its own)")
		fs.IntVar(&m.Round, "metrics-round", 1, "round label of the metrics (lockbench run --procs passes the round)")
		_ = fs.MarkHidden("metrics-run-id")
		_ = fs.MarkHidden("metrics-round")
	}
}

// Check returns what is wrong with the flags of fs when this process serves for procs
// generator processes (a worker serves on its own address: 1), as MetricsSpec.Check says, or
// nil. The error wraps ErrBadSpec and names the flag.
func (m *MetricsFlags) Check(fs *pflag.FlagSet, procs int) error {
	if m.Addr == "" && fs.Changed("metrics-linger") {
		return bad("--metrics-linger needs --metrics-addr")
	}
	return m.Spec(procs).Check()
}

// Spec is where the flags say this process serves its metrics (ServeMetrics), with procs
// generator processes.
func (m *MetricsFlags) Spec(procs int) MetricsSpec {
	return MetricsSpec{Addr: m.Addr, RunID: m.RunID, Linger: m.Linger, Procs: procs}
}

// Worker is the WorkerMetrics of the worker the flags describe.
func (m *MetricsFlags) Worker() WorkerMetrics {
	return WorkerMetrics{Addr: m.Addr, RunID: m.RunID, Round: m.Round, Linger: m.Linger}
}
