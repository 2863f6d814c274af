package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/metrics"
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

	warning string
	server  *metrics.Server
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

// check returns what is wrong with the flags, or "".
func (m *metricsFlags) check(fs *pflag.FlagSet, f *runFlags, cmd string) string {
	if m.addr == "" {
		if fs.Changed("metrics-linger") {
			return "--metrics-linger needs --metrics-addr"
		}
		return ""
	}
	w, err := metrics.CheckAddr(m.addr)
	if err != nil {
		return "--metrics-addr: " + err.Error()
	}
	m.warning = w
	if m.linger < 0 {
		return fmt.Sprintf("--metrics-linger %v must not be negative", m.linger)
	}
	if cmd == cmdRun && f.fleet.procs > 1 {
		if _, err := metrics.GeneratorAddr(m.addr, f.fleet.procs-1); err != nil {
			return "--metrics-addr with --procs: " + err.Error()
		}
	}
	if m.runID == "" {
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		m.runID = hex.EncodeToString(b)
	}
	return ""
}

// start serves the metrics, before anything is measured: a port in use is bad input. With
// --procs the processes serve (each on PORT+index) and this one only checks that the ports are
// free. It reports what went wrong, for exit code 2.
func (m *metricsFlags) start(f *runFlags, cmd string, ui *progressUI) error {
	if m.addr == "" {
		return nil
	}
	if m.warning != "" {
		ui.line("warning: %s", m.warning)
	}
	if cmd == cmdRun && f.fleet.procs > 1 {
		addrs := m.generatorAddrs(f.fleet.procs)
		if err := metrics.CheckFree(addrs...); err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		ui.line("metrics: each generator process serves its own: http://%s/metrics to http://%s/metrics (run_id %s)", addrs[0], addrs[len(addrs)-1], m.runID)
		return nil
	}
	s, err := metrics.Listen(m.addr)
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	m.server = s
	ui.line("metrics: %s (run_id %s)", s.URL(), m.runID)
	return nil
}

func (m *metricsFlags) generatorAddrs(procs int) []string {
	out := make([]string, procs)
	for i := range out {
		out[i], _ = metrics.GeneratorAddr(m.addr, i) // checked by check
	}
	return out
}

// stop lingers (--metrics-linger) and closes the server, if one runs.
func (m *metricsFlags) stop() {
	if m.server == nil {
		return
	}
	if m.linger > 0 {
		time.Sleep(m.linger)
	}
	m.server.Close()
	m.server = nil
}

// childArgs are the metrics flags of generator process index of a --procs run.
func (m *metricsFlags) childArgs(index, round int) []string {
	if m.addr == "" {
		return nil
	}
	addr, _ := metrics.GeneratorAddr(m.addr, index)
	args := []string{"--metrics-addr", addr, "--metrics-run-id", m.runID, "--metrics-round", strconv.Itoa(round)}
	if m.linger > 0 {
		args = append(args, "--metrics-linger", m.linger.String())
	}
	return args
}

// runMetrics is the bench.Options.Metrics of lockbench run and sweep: a run's live figures go
// to the Prometheus exporter, when one is served.
func (m *metricsFlags) runMetrics(l metrics.Labels) func(workloads.Live) {
	l.RunID = m.runID
	if mr := m.server.Run(l); mr != nil {
		return mr.Update
	}
	return nil
}

// live returns the Plan.Live of a worker's run: its metrics, when served; nil otherwise.
func (m *metricsFlags) live(l metrics.Labels) func(workloads.Live) string {
	update := m.runMetrics(l)
	if update == nil {
		return nil
	}
	return func(lv workloads.Live) string {
		update(lv)
		return ""
	}
}
