package results

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestSummaryStatesThePipe: with the null adapter's row (exec:null) in the run, each external
// driver's acquire latency is set against it, case by case; built-in drivers are not, and
// without the null row nothing is said.
func TestSummaryStatesThePipe(t *testing.T) {
	run := func(driver string, p50, p99 float64) Run {
		return Run{Driver: driver, Workload: "contention", Topology: "single", Concurrency: 64, Keys: 10000, Complete: true,
			DurationS: 1, Acquisitions: 1000, ThroughputPerS: 1000, AcquireLatencyUS: Percentiles{P50: p50, P99: p99}}
	}
	py := "exec:redis-py=/usr/bin/python3 adapters/redispy_lock.py"
	var buf bytes.Buffer
	pyRun := run(py, 800, 4000)
	pyRun.SetClientCPU(50 * time.Millisecond) // 50 µs per acquisition
	pyRun.SetAdapterCPU(35 * time.Millisecond)
	if err := WriteSummary(&buf, []Run{run("lockcore", 300, 900), pyRun, run("exec:null", 40, 200)}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"the pipe in external drivers' latency (exec:null, the protocol with no lock work, same run: acquire p50 40µs, p99 200µs):",
		"  " + py + ": acquire p50 800µs (the pipe 5%), p99 4.00ms (the pipe 5%); client CPU/acq 50µs, the adapter's 35µs of it"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "  lockcore: acquire") {
		t.Errorf("a built-in driver is set against the pipe:\n%s", out)
	}
	buf.Reset()
	if err := WriteSummary(&buf, []Run{run("lockcore", 300, 900), run(py, 800, 4000)}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "the pipe") {
		t.Errorf("a summary without the null row mentions the pipe:\n%s", buf.String())
	}
}
