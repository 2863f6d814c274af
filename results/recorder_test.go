package results

import (
	"math"
	"testing"
	"time"
)

func TestMicros(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want int64
	}{
		{"negative", -time.Second, MinLatencyUS},
		{"min int64", math.MinInt64, MinLatencyUS},
		{"zero", 0, MinLatencyUS},
		{"sub-microsecond", 400 * time.Nanosecond, MinLatencyUS},
		{"one microsecond", time.Microsecond, 1},
		{"rounds down", 1499 * time.Nanosecond, 1},
		{"rounds up", 1500 * time.Nanosecond, 2},
		{"typical", 412 * time.Microsecond, 412},
		{"max", MaxLatencyUS * time.Microsecond, MaxLatencyUS},
		{"above max", time.Hour, MaxLatencyUS},
		{"max int64", math.MaxInt64, MaxLatencyUS},
	}
	for _, tt := range tests {
		if got := micros(tt.d); got != tt.want {
			t.Errorf("%s: micros(%v) = %d, want %d", tt.name, tt.d, got, tt.want)
		}
	}
}

func TestRecordNeverDrops(t *testing.T) {
	r := NewRecorder()
	for _, d := range []time.Duration{-1, 0, time.Nanosecond, time.Millisecond, time.Hour, math.MaxInt64} {
		r.Record(d, d, d)
	}
	for name, h := range map[string]interface{ TotalCount() int64 }{"acquire": r.acquire, "release": r.release, "cycle": r.cycle} {
		if got := h.TotalCount(); got != 6 {
			t.Errorf("%s histogram holds %d values, want 6", name, got)
		}
	}
	if !r.cycle.ValuesAreEquivalent(r.cycle.Max(), MaxLatencyUS) {
		t.Errorf("max = %d, want about %d", r.cycle.Max(), MaxLatencyUS)
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	r := NewRecorder()
	sampled := NewRecorder()
	NewTimelineRecorder([]*Recorder{sampled}, time.Second) // not started: only the interval state
	for name, r := range map[string]*Recorder{"plain": r, "sampled by a timeline": sampled} {
		if n := testing.AllocsPerRun(1000, func() {
			r.Record(412*time.Microsecond, 80*time.Microsecond, time.Millisecond)
		}); n != 0 {
			t.Errorf("%s: Record allocates %v times per call, want 0", name, n)
		}
	}
}

func BenchmarkRecord(b *testing.B) {
	r := NewRecorder()
	b.ReportAllocs()
	d := 412 * time.Microsecond
	for b.Loop() {
		r.Record(d, d/4, d*2)
	}
}

// BenchmarkRecordTimeline is Record on a recorder a timeline samples (every 10ms here, 100
// times more often than a run's): the cost of the per-second figures on the hot path.
func BenchmarkRecordTimeline(b *testing.B) {
	r := NewRecorder()
	tr := NewTimelineRecorder([]*Recorder{r}, 10*time.Millisecond)
	tr.Start()
	b.ReportAllocs()
	d := 412 * time.Microsecond
	for b.Loop() {
		r.Record(d, d/4, d*2)
	}
	b.StopTimer()
	tr.Stop()
}

func BenchmarkNewRecorder(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		NewRecorder()
	}
}
