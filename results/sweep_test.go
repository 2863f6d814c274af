package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func testSweep() *Sweep {
	return &Sweep{
		Mode: SweepConcurrency, Loads: []float64{1, 2},
		SLO:              SweepSLO{Name: "p99", Percentile: 99, LimitUS: 5000},
		SaturationMargin: 0.05, StopFactor: 4,
		Drivers: []SweepDriver{{Driver: "lockcore", KneeStep: 1, KneeLoad: 1,
			Steps: []SweepStep{{Step: 1, Load: 1, Run: 0, ThroughputPerS: 100, LatencyUS: 300, Verdict: VerdictOK}}}},
	}
}

// A sweep file reads back with its record; without one (every older file) Sweep is nil.
func TestSweepRoundTrip(t *testing.T) {
	f := testFile(t)
	f.Sweep = testSweep()
	path, err := WriteFile(t.TempDir(), f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, "-sweep-contention.json") {
		t.Errorf("file name %s; want it to say sweep", path)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sweep == nil || got.Sweep.Drivers[0].KneeStep != 1 || got.Sweep.Drivers[0].Steps[0].Verdict != VerdictOK {
		t.Fatalf("sweep read back as %+v", got.Sweep)
	}
	plain, err := WriteFile(t.TempDir(), testFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(plain); err != nil || got.Sweep != nil {
		t.Fatalf("a run file reads back with sweep %+v, %v", got.Sweep, err)
	}
}

// The raw round trips, back to back and paced, read back; a sweep record from before them (no
// round_trip, no paced_round_trips) still reads, with none.
func TestSweepRoundTripsOptional(t *testing.T) {
	f := testFile(t)
	f.Sweep = testSweep()
	f.Sweep.Mode = SweepRate
	f.Sweep.RoundTrip = &SweepRoundTrip{Count: 5000, DurationS: 0.4, P50US: 68, P99US: 115, LatencyUS: 115}
	f.Sweep.PacedRoundTrips = []SweepRoundTrip{
		{RatePerS: 12.5, Count: 125, DurationS: 10, P50US: 90, P99US: 300, LatencyUS: 300},
		{RatePerS: 250, Error: "no paced round trip at 250/s: i/o timeout"},
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"paced_round_trips":[{"rate_per_s":12.5,"count":125,`) || strings.Contains(buf.String(), `"round_trip":{"rate_per_s"`) {
		t.Errorf("encoded as %s; want the paced ones with their rate, the back-to-back one without", buf.String())
	}
	got, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if rt, p := got.Sweep.RoundTrip, got.Sweep.PacedRoundTrips; rt == nil || rt.P99US != 115 || rt.RatePerS != 0 ||
		len(p) != 2 || p[0].RatePerS != 12.5 || p[0].P99US != 300 || p[1].Error == "" {
		t.Errorf("read back as %+v, %+v", got.Sweep.RoundTrip, got.Sweep.PacedRoundTrips)
	}

	old := testFile(t)
	old.Sweep = testSweep()
	data, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "round_trip") {
		t.Fatalf("a sweep with no round trip encodes one: %s", data)
	}
	got, err = Decode(bytes.NewReader(data))
	if err != nil || got.Sweep.RoundTrip != nil || got.Sweep.PacedRoundTrips != nil {
		t.Errorf("a file from before the round trips: %+v, %v", got.Sweep, err)
	}
}

// A sweep record that points outside the file is a bad file, not a crash later.
func TestSweepChecked(t *testing.T) {
	for _, c := range []struct {
		edit func(*Sweep)
		msg  string
	}{
		{func(s *Sweep) { s.Mode = "load" }, `sweep.mode "load"`},
		{func(s *Sweep) { s.SLO.Percentile = 100 }, "sweep.slo"},
		{func(s *Sweep) { s.SLO.LimitUS = 0 }, "sweep.slo"},
		{func(s *Sweep) { s.Drivers[0].KneeStep = 3 }, "drivers[0].knee_step 3"},
		{func(s *Sweep) { s.Drivers[0].Steps[0].Step = 0 }, "steps[0].step 0"},
		{func(s *Sweep) { s.Drivers[0].Steps[0].Run = 1 }, "steps[0].run 1: the file has 1 runs"},
		{func(s *Sweep) { s.Drivers[0].Steps[0].Run = -2 }, "steps[0].run -2"},
	} {
		f := testFile(t)
		f.Sweep = testSweep()
		c.edit(f.Sweep)
		data, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Decode(bytes.NewReader(data))
		if !errors.Is(err, ErrBadResult) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Decode: %v; want ErrBadResult with %q", err, c.msg)
		}
	}
}
