package metrics

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
)

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr        string
		ok, warning bool
	}{
		{"127.0.0.1:9464", true, false},
		{"localhost:9464", true, false},
		{"[::1]:9464", true, false},
		{"127.0.0.1:0", true, false},
		{"0.0.0.0:9464", true, true},
		{"10.1.2.3:9464", true, true},
		{":9464", false, false},
		{"9464", false, false},
		{"127.0.0.1:99999", false, false},
		{"127.0.0.1:http", false, false},
	} {
		w, err := CheckAddr(c.addr)
		if (err == nil) != c.ok || (w != "") != c.warning {
			t.Errorf("CheckAddr(%q) = %q, %v; want ok %v, warning %v", c.addr, w, err, c.ok, c.warning)
		}
		if err != nil && !errors.Is(err, ErrBadAddr) {
			t.Errorf("CheckAddr(%q): %v does not wrap ErrBadAddr", c.addr, err)
		}
	}
	if _, err := CheckAddr(":9464"); err == nil || !strings.Contains(err.Error(), "0.0.0.0:9464 to expose it on purpose") {
		t.Errorf("':9464' refused with %v; want the explicit alternatives named", err)
	}
}

func TestGeneratorAddr(t *testing.T) {
	if a, err := GeneratorAddr("127.0.0.1:9464", 3); err != nil || a != "127.0.0.1:9467" {
		t.Errorf("generator 3: %q, %v", a, err)
	}
	if _, err := GeneratorAddr("127.0.0.1:0", 1); !errors.Is(err, ErrBadAddr) {
		t.Errorf("port 0: %v, want ErrBadAddr", err)
	}
	if _, err := GeneratorAddr("127.0.0.1:65535", 1); !errors.Is(err, ErrBadAddr) {
		t.Errorf("past 65535: %v, want ErrBadAddr", err)
	}
}

func TestPortInUse(t *testing.T) {
	defer goleak.VerifyNone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := Listen(ln.Addr().String()); !errors.Is(err, ErrBadAddr) || !strings.Contains(err.Error(), "in use") {
		t.Errorf("Listen on a taken port: %v; want ErrBadAddr, in use", err)
	}
	if err := CheckFree(ln.Addr().String()); !errors.Is(err, ErrBadAddr) {
		t.Errorf("CheckFree on a taken port: %v", err)
	}
}

func TestBuckets(t *testing.T) {
	if Buckets[0] != 50e-6 || Buckets[len(Buckets)-1] < 9.9 || len(Buckets) > 60 {
		t.Errorf("buckets %v", Buckets)
	}
	for i := 1; i < len(Buckets); i++ {
		if r := Buckets[i] / Buckets[i-1]; r < 1.15 || r > 1.4 {
			t.Errorf("bucket %d/%d ratio %.3f: want about 1.26", i, i-1, r)
		}
	}
}

// TestServeRun: a run's figures, scraped over HTTP and parsed as Prometheus parses them.
func TestServeRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.Run(Labels{RunID: "abc", Driver: "lockcore", Workload: "contention", Topology: "single", Round: 2})
	acq := hdrhistogram.New(results.MinLatencyUS, results.MaxLatencyUS, results.SigFigs)
	for i := range 1000 {
		_ = acq.RecordValue(int64(100 + i)) // 100µs to 1099µs
	}
	l := workloads.Live{Acquire: acq, Cycle: acq, Attempts: 1500, FailedAttempts: 500, Counted: true, InFlight: 7, Late: 3, RedisCommands: 9000}
	l.Run.Acquisitions, l.Run.Violations = 1000, 1
	l.Run.ErrorsByKind = map[string]int64{"timeout": 4}
	r.Update(l)

	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	value := func(name string) float64 {
		f := fams[name]
		if f == nil || len(f.Metric) != 1 {
			t.Fatalf("%s: %v", name, f)
		}
		m := f.Metric[0]
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		}
		return float64(m.Histogram.GetSampleCount())
	}
	for name, want := range map[string]float64{
		"lockbench_acquisitions_total": 1000, "lockbench_lock_attempts_total": 1500, "lockbench_failed_attempts_total": 500,
		"lockbench_errors_total": 4, "lockbench_violations_total": 1, "lockbench_attempts_in_flight": 7,
		"lockbench_open_loop_late_total": 3, "lockbench_redis_commands_total": 9000, "lockbench_redis_commands_per_acquisition": 9,
		"lockbench_acquire_wait_seconds": 1000, "lockbench_measuring": 1,
	} {
		if got := value(name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	h := fams["lockbench_acquire_wait_seconds"].Metric[0]
	labels := map[string]string{}
	for _, lp := range h.Label {
		labels[lp.GetName()] = lp.GetValue()
	}
	if labels["run_id"] != "abc" || labels["driver"] != "lockcore" || labels["round"] != "2" || labels["generator"] != "0" || labels["step"] != "" {
		t.Errorf("labels %v", labels)
	}
	for _, b := range h.Histogram.Bucket {
		le, n := b.GetUpperBound(), b.GetCumulativeCount()
		want := uint64(0)
		switch us := le * 1e6; {
		case us >= 1099:
			want = 1000
		case us >= 100:
			want = uint64(us) - 99 // values 100..us
		}
		if d := int64(n) - int64(want); d < -2 || d > 2 { // HDR's 3 digits at the bound
			t.Errorf("bucket le=%v: %d, want %d", le, n, want)
		}
	}
	if sum := h.Histogram.GetSampleSum(); sum < 0.59 || sum > 0.61 { // mean 599.5µs × 1000
		t.Errorf("sum %v s, want 0.5995", sum)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	var nilServer *Server
	nilServer.Run(Labels{}).Update(l) // no server: no-ops
}
