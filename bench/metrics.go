package bench

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/lockbench/lockbench/metrics"
	"github.com/lockbench/lockbench/workloads"
)

// MetricsSpec is where a session serves its runs' Prometheus metrics. It is a plain value; a
// zero Addr serves none.
type MetricsSpec struct {
	// Addr is HOST:PORT (metrics.CheckAddr). With Procs > 1 the generator processes serve
	// instead, process i on PORT+i (metrics.GeneratorAddr), and this process only checks that
	// those ports are free.
	Addr string
	// RunID is the run_id label of every series; "" is a random one (8 hex digits), which
	// ServeMetrics says.
	RunID string
	// Linger keeps serving this long after the last run (Stop), so that Prometheus scrapes the
	// final figures.
	Linger time.Duration
	// Procs is the number of generator processes; 0 is 1.
	Procs int
}

// Metrics is a session's Prometheus endpoint. A nil *Metrics serves nothing; its methods are
// safe for concurrent use.
type Metrics struct {
	spec   MetricsSpec
	server *metrics.Server
}

// ServeMetrics serves the metrics spec asks for, before anything is measured, and says where on
// rep. A port in use or an address that cannot serve is an error wrapping ErrBadSpec.
func ServeMetrics(spec MetricsSpec, rep Reporter) (*Metrics, error) {
	if spec.Addr == "" {
		return nil, nil
	}
	if spec.RunID == "" {
		b := make([]byte, 4)
		_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
		spec.RunID = hex.EncodeToString(b)
	}
	warn, err := metrics.CheckAddr(spec.Addr)
	if err != nil {
		return nil, bad("--metrics-addr: %v", err)
	}
	if warn != "" {
		rep.Line("warning: %s", warn)
	}
	m := &Metrics{spec: spec}
	if spec.Procs > 1 {
		addrs := m.generatorAddrs()
		if err := metrics.CheckFree(addrs...); err != nil {
			return nil, bad("--metrics-addr: %v", err)
		}
		rep.Line("metrics: each generator process serves its own: http://%s/metrics to http://%s/metrics (run_id %s)", addrs[0], addrs[len(addrs)-1], spec.RunID)
		return m, nil
	}
	s, err := metrics.Listen(spec.Addr)
	if err != nil {
		return nil, bad("--metrics-addr: %v", err)
	}
	m.server = s
	rep.Line("metrics: %s (run_id %s)", s.URL(), spec.RunID)
	return m, nil
}

// generatorAddrs are the addresses the generator processes serve on.
func (m *Metrics) generatorAddrs() []string {
	out := make([]string, m.spec.Procs)
	for i := range out {
		out[i], _ = metrics.GeneratorAddr(m.spec.Addr, i) // checked by the caller (CheckGeneratorAddrs)
	}
	return out
}

// worker returns the metrics of generator process index in round: where it serves, with this
// session's run id and linger; zero when m serves none.
func (m *Metrics) worker(index, round int) WorkerMetrics {
	if m == nil {
		return WorkerMetrics{}
	}
	addr, _ := metrics.GeneratorAddr(m.spec.Addr, index)
	return WorkerMetrics{Addr: addr, RunID: m.spec.RunID, Round: round, Linger: m.spec.Linger}
}

// CheckGeneratorAddrs returns what is wrong with serving metrics from procs processes on PORT+i
// of addr, wrapping ErrBadSpec, or nil.
func CheckGeneratorAddrs(addr string, procs int) error {
	if _, err := metrics.GeneratorAddr(addr, procs-1); err != nil {
		return bad("--metrics-addr with --procs: %v", err)
	}
	return nil
}

// Run is Options.Metrics: a run's live figures go to the endpoint this process serves, or
// nowhere.
func (m *Metrics) Run(l metrics.Labels) func(workloads.Live) {
	if m == nil {
		return nil
	}
	l.RunID = m.spec.RunID
	if mr := m.server.Run(l); mr != nil {
		return mr.Update
	}
	return nil
}

// live returns the Plan.Live of a worker's run: its metrics, when served; nil otherwise.
func (m *Metrics) live(l metrics.Labels) func(workloads.Live) string {
	update := m.Run(l)
	if update == nil {
		return nil
	}
	return func(lv workloads.Live) string {
		update(lv)
		return ""
	}
}

// Stop lingers (MetricsSpec.Linger) and closes the endpoint, if this process serves one.
func (m *Metrics) Stop() {
	if m == nil || m.server == nil {
		return
	}
	if m.spec.Linger > 0 {
		time.Sleep(m.spec.Linger)
	}
	m.server.Close()
	m.server = nil
}

// serveWorkerMetrics serves a worker's metrics, as ServeMetrics does for one process.
func serveWorkerMetrics(wm WorkerMetrics, rep Reporter) (*Metrics, error) {
	m, err := ServeMetrics(MetricsSpec{Addr: wm.Addr, RunID: wm.RunID, Linger: wm.Linger}, rep)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Check returns what is wrong with spec before anything is served, as an error wrapping
// ErrBadSpec that names lockbench's flags: the address (metrics.CheckAddr), a negative Linger
// and, with Procs > 1, the generator processes' ports (CheckGeneratorAddrs). An empty Addr
// serves nothing and passes.
func (spec MetricsSpec) Check() error {
	if spec.Addr == "" {
		return nil
	}
	if _, err := metrics.CheckAddr(spec.Addr); err != nil {
		return bad("--metrics-addr: %v", err)
	}
	if spec.Linger < 0 {
		return bad("--metrics-linger %v must not be negative", spec.Linger)
	}
	if spec.Procs > 1 {
		return CheckGeneratorAddrs(spec.Addr, spec.Procs)
	}
	return nil
}
