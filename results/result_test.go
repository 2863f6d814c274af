package results

import (
	"maps"
	"testing"
	"time"
)

// linearStats returns stats with acquire latencies 1..n µs, release half of
// that and cycle twice that.
func linearStats(n int) *Stats {
	r := NewRecorder()
	for i := 1; i <= n; i++ {
		d := time.Duration(i) * time.Microsecond
		r.Record(d, d/2, 2*d)
	}
	return Merge(r)
}

func TestFill(t *testing.T) {
	s := linearStats(1000)
	s.Errors["release"] = 3

	var r Run
	if err := r.Fill(s, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if r.Acquisitions != 1000 || r.ThroughputPerS != 500 || r.DurationS != 2 {
		t.Errorf("acquisitions %d, throughput %v, duration %v; want 1000, 500, 2", r.Acquisitions, r.ThroughputPerS, r.DurationS)
	}
	// Values below 2048 are exact at 3 significant figures.
	want := Percentiles{P50: 500, P90: 900, P99: 990, P999: 999, Max: 1000, Mean: 500.5}
	if r.AcquireLatencyUS != want {
		t.Errorf("acquire = %+v, want %+v", r.AcquireLatencyUS, want)
	}
	if r.CycleLatencyUS.P99 != 1980 {
		t.Errorf("cycle p99 = %v, want 1980", r.CycleLatencyUS.P99)
	}
	if r.Errors != 3 || !maps.Equal(r.ErrorsByKind, map[string]int64{"release": 3}) {
		t.Errorf("errors %d %v, want 3 map[release:3]", r.Errors, r.ErrorsByKind)
	}
	s.Errors["release"] = 4
	if r.ErrorsByKind["release"] != 3 {
		t.Error("ErrorsByKind aliases Stats.Errors")
	}
	if r.Histograms.Acquire == "" || r.Histograms.Release == "" || r.Histograms.Cycle == "" {
		t.Errorf("histograms not encoded: %+v", r.Histograms)
	}
}

func TestFillEmpty(t *testing.T) {
	for name, s := range map[string]*Stats{"nil": nil, "empty": Merge()} {
		var r Run
		if err := r.Fill(s, 0); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.ThroughputPerS != 0 || r.AcquireLatencyUS != (Percentiles{}) || r.ErrorsByKind != nil {
			t.Errorf("%s: %+v", name, r)
		}
		a, _, _, err := r.Histograms.Decode()
		if err != nil || a.TotalCount() != 0 {
			t.Errorf("%s: decode: %v, %v", name, a, err)
		}
	}
}

func TestSetCommands(t *testing.T) {
	delta := CommandStats{
		"evalsha": {Calls: 200},
		"hincrby": {Calls: 100}, // run by the script, counted too
		"info":    {Calls: 1},
		"ping":    {Usec: 5},
	}
	tests := []struct {
		name         string
		acquisitions int64
		fillFirst    bool
		wantPerAcq   float64
	}{
		{"set after fill", 100, true, 3},
		{"set before fill", 100, false, 3},
		{"no acquisitions", 0, true, 0},
	}
	for _, tt := range tests {
		var r Run
		s := linearStats(int(tt.acquisitions))
		if tt.fillFirst {
			r.Fill(s, time.Second)
			r.SetCommands(delta)
		} else {
			r.SetCommands(delta)
			r.Fill(s, time.Second)
		}
		if r.RedisCommands != 300 || r.RedisCommandsPerAcquisition != tt.wantPerAcq {
			t.Errorf("%s: commands %d, per acquisition %v; want 300, %v", tt.name, r.RedisCommands, r.RedisCommandsPerAcquisition, tt.wantPerAcq)
		}
		if want := map[string]int64{"evalsha": 200, "hincrby": 100}; !maps.Equal(r.RedisCommandsByName, want) {
			t.Errorf("%s: by name %v, want %v", tt.name, r.RedisCommandsByName, want)
		}
	}
}

// TestWaitingMetrics checks the pub/sub waiting metrics: read from a run that counted its
// waiting, not measured for one that did not (a polling driver).
func TestWaitingMetrics(t *testing.T) {
	counted := Run{Acquisitions: 200}
	counted.SetWaiting(WaitCounts{Subscribes: 50, SubscribeTimeouts: 3, EndedWithoutWake: 4})
	polling := Run{Acquisitions: 200}
	for name, want := range map[string]float64{"subscribes": 0.25, "subscribe-timeouts": 3, "missed-wakeups": 4} {
		m, ok := LookupMetric(name)
		if !ok {
			t.Fatalf("no metric %q", name)
		}
		if v, ok := m.Value(&counted); !ok || v != want {
			t.Errorf("%s = %g, %v; want %g", name, v, ok, want)
		}
		if _, ok := m.Value(&polling); ok {
			t.Errorf("%s measured for a run that did not count its waiting", name)
		}
	}
}
