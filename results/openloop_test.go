package results

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// An open-loop recorder puts latency from the intended start in the acquire histogram, and the
// latency as measured in the service-time one; a closed-loop recorder ignores StartedLate.
func TestOpenLoopRecorder(t *testing.T) {
	open, closed := NewOpenLoopRecorder(), NewRecorder()
	for _, r := range []*Recorder{open, closed} {
		r.StartedLate(0)
		r.Record(time.Millisecond, time.Millisecond, 2*time.Millisecond)
		r.StartedLate(500 * time.Millisecond) // a stall: this attempt waited half a second to start
		r.Record(time.Millisecond, time.Millisecond, 2*time.Millisecond)
	}
	s := Merge(open, nil)
	if s.Service == nil || s.Service.TotalCount() != 2 || s.Acquire.TotalCount() != 2 {
		t.Fatalf("open loop: service %v, acquire count %d; want 2 of each", s.Service, s.Acquire.TotalCount())
	}
	if got := s.Acquire.Max(); got < 500_000 || got > 502_000 {
		t.Errorf("corrected acquire max %dµs, want 501ms", got)
	}
	if got := s.Service.Max(); got > 1001 {
		t.Errorf("service max %dµs, want 1ms", got)
	}
	if c := Merge(closed); c.Service != nil || c.Acquire.Max() > 1001 {
		t.Errorf("closed loop: service %v, acquire max %dµs; want none and 1ms", c.Service, c.Acquire.Max())
	}

	var run Run
	if err := run.Fill(s, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if run.ServiceLatencyUS == nil || run.Histograms.Service == "" {
		t.Fatalf("Fill left out the service time: %+v, %q", run.ServiceLatencyUS, run.Histograms.Service)
	}
	if d, err := decode(run.Histograms.Service); err != nil || d.TotalCount() != 2 {
		t.Errorf("service histogram decodes to %v, %v", d, err)
	}
}

func TestSetOpenLoopSaturation(t *testing.T) {
	cases := []struct {
		name          string
		acquisitions  int64
		late, dropped int64
		saturated     bool
	}{
		{"on target", 6000, 0, 0, false},
		{"1% short", 5941, 0, 0, false},
		{"more than 1% short", 5939, 0, 0, true},
		{"late", 6000, 1, 0, true},
		{"dropped", 6000, 0, 1, true},
	}
	for _, c := range cases {
		r := Run{Acquisitions: c.acquisitions}
		r.SetOpenLoop("uniform", 2000, 3*time.Second, c.late, c.dropped)
		if r.Saturated != c.saturated || r.Pacing != PacingOpen {
			t.Errorf("%s: saturated %v pacing %q, want %v open (achieved %v)", c.name, r.Saturated, r.Pacing, c.saturated, r.AchievedRate)
		}
	}
}

// A closed-loop run's case is what it was before open loops; an open loop's adds its arrival and
// rate, so that runs at different rates are not compared as one case.
func TestOpenLoopCase(t *testing.T) {
	closed := rep("a", 1, 100, 10, 3, 0)
	closed.Pacing = PacingClosed
	want := "workload=contention topology=single concurrency=8 keys=100 key_dist= hold_us=0"
	if got := closed.Case().String(); got != want {
		t.Errorf("closed-loop case %q, want %q", got, want)
	}
	open := closed
	open.SetOpenLoop("poisson", 2000, time.Second, 0, 0)
	if got := open.Case().String(); got != want+" arrival=poisson target_rate=2000" {
		t.Errorf("open-loop case %q", got)
	}
}

func TestSummaryOpenLoop(t *testing.T) {
	closed := rep("a", 0, 100, 10, 3, 0)
	var buf bytes.Buffer
	if err := WriteSummary(&buf, []Run{closed}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "open loop") {
		t.Errorf("a closed-loop summary mentions the open loop:\n%s", buf.String())
	}
	easy, over := closed, closed
	easy.Driver, over.Driver = "easy", "over"
	easy.Acquisitions, over.Acquisitions = 2000, 900
	easy.ServiceLatencyUS = &Percentiles{P50: 300, P99: 800}
	easy.SetOpenLoop("uniform", 2000, time.Second, 0, 0)
	over.SetOpenLoop("uniform", 2000, time.Second, 30, 1070)
	buf.Reset()
	if err := WriteSummary(&buf, []Run{easy, over}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(out, "\n")
	var easyLine, overLine string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "easy ") && strings.Contains(l, "uniform"):
			easyLine = l
		case strings.HasPrefix(l, "over ") && strings.Contains(l, "uniform"):
			overLine = l
		}
	}
	if !strings.Contains(out, "open loop (") || easyLine == "" || overLine == "" {
		t.Fatalf("no open-loop rows:\n%s", out)
	}
	if strings.Contains(easyLine, "SATURATED") || !strings.Contains(easyLine, "800µs") {
		t.Errorf("easy row %q: want the service p99 and no SATURATED", easyLine)
	}
	if f := strings.Fields(overLine); !strings.Contains(overLine, "SATURATED") || f[3] != "900" || f[4] != "30" || f[5] != "1070" {
		t.Errorf("saturated row %q: want achieved 900, late 30, dropped 1070, SATURATED", overLine)
	}
}

// The start lag (the generator's own delay on attempts taken on time) has a histogram of its
// own, merged, filled into the run and encoded; a closed-loop recorder keeps none.
func TestScheduleLag(t *testing.T) {
	open, closed := NewOpenLoopRecorder(), NewRecorder()
	for _, r := range []*Recorder{open, closed} {
		r.ScheduleLag(20 * time.Microsecond)
		r.ScheduleLag(700 * time.Microsecond)
		r.ScheduleLag(-time.Microsecond) // a clock read just before the slot: no lag, clamped
	}
	other := NewOpenLoopRecorder()
	other.ScheduleLag(3 * time.Millisecond)
	s := Merge(open, other)
	if s.StartLag == nil || s.StartLag.TotalCount() != 4 || s.StartLag.Max() < 2990 || s.StartLag.Max() > 3010 {
		t.Fatalf("start lag %v; want 4 values up to 3ms", s.StartLag)
	}
	if c := Merge(closed); c.StartLag != nil {
		t.Errorf("closed loop kept a start lag: %v", c.StartLag)
	}
	var run Run
	if err := run.Fill(s, time.Second); err != nil {
		t.Fatal(err)
	}
	if run.StartLagUS == nil || run.Histograms.StartLag == "" || run.StartLagUS.Max < 2990 {
		t.Fatalf("Fill: start lag %+v, histogram %q", run.StartLagUS, run.Histograms.StartLag)
	}
	h, err := decode(run.Histograms.StartLag)
	if err != nil || h.TotalCount() != 4 {
		t.Fatalf("decoded start lag: %v, %v", h, err)
	}
}

// The processes' start-lag histograms merge like their service times: the merged run has
// every on-time attempt's lag.
func TestMergeOpenLoopStartLag(t *testing.T) {
	var parts []Run
	for i, lag := range []time.Duration{10 * time.Microsecond, 2 * time.Millisecond} {
		rec := NewOpenLoopRecorder()
		for range 100 * (i + 1) {
			rec.ScheduleLag(lag)
			rec.StartedLate(lag)
			rec.Record(time.Millisecond, time.Microsecond, time.Millisecond)
		}
		r := Run{Driver: "lockcore", Pacing: PacingOpen, Arrival: "uniform", TargetRate: 100, Complete: true,
			Fleet: &Fleet{Procs: 2, Processes: []ProcessResult{{Index: i}}}}
		if err := r.Fill(Merge(rec), time.Second); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, r)
	}
	m, err := MergeProcesses(parts)
	if err != nil {
		t.Fatal(err)
	}
	h, err := decode(m.Histograms.StartLag)
	if err != nil || h.TotalCount() != 300 || m.StartLagUS == nil || m.StartLagUS.Max < 1990 || m.StartLagUS.P50 > 2010 || m.StartLagUS.P50 < 1990 {
		t.Fatalf("merged start lag %+v (%v, err %v); want 300 lags, the median 2ms", m.StartLagUS, h, err)
	}
}
