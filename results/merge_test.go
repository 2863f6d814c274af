package results

import (
	"maps"
	"testing"
	"time"
)

func TestMerge(t *testing.T) {
	a, b := NewRecorder(), NewRecorder()
	for i := 1; i <= 100; i++ {
		d := time.Duration(i) * time.Microsecond
		a.Record(d, d, 2*d)
		b.Record(d+100*time.Microsecond, d, 2*d)
	}
	a.Error("acquire")
	a.Error("timeout")
	b.Error("acquire")

	s := Merge(a, nil, b)
	if s.Acquisitions != 200 {
		t.Errorf("Acquisitions = %d, want 200", s.Acquisitions)
	}
	for name, got := range map[string]int64{"acquire": s.Acquire.TotalCount(), "release": s.Release.TotalCount(), "cycle": s.Cycle.TotalCount()} {
		if got != 200 {
			t.Errorf("%s count = %d, want 200", name, got)
		}
	}
	if got := s.Acquire.Max(); got != 200 {
		t.Errorf("acquire max = %d, want 200", got)
	}
	if want := map[string]int64{"acquire": 2, "timeout": 1}; !maps.Equal(s.Errors, want) {
		t.Errorf("Errors = %v, want %v", s.Errors, want)
	}
	if got := s.ErrorCount(); got != 3 {
		t.Errorf("ErrorCount = %d, want 3", got)
	}
	// Merging must not change the recorders.
	if got := a.cycle.TotalCount(); got != 100 {
		t.Errorf("recorder changed by Merge: %d values, want 100", got)
	}
}

func TestMergeNone(t *testing.T) {
	for name, s := range map[string]*Stats{"no args": Merge(), "only nil": Merge(nil, nil)} {
		if s.Acquire == nil || s.Release == nil || s.Cycle == nil || s.Errors == nil {
			t.Fatalf("%s: nil field in %+v", name, s)
		}
		if s.Acquisitions != 0 || s.Cycle.TotalCount() != 0 || s.ErrorCount() != 0 {
			t.Errorf("%s: not empty: %+v", name, s)
		}
	}
}
