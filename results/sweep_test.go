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
