package results

import (
	"math"
	"testing"
	"time"
)

func TestFairnessOf(t *testing.T) {
	a, b := NewRecorder(), NewRecorder()
	for range 3 {
		a.Record(time.Millisecond, time.Microsecond, 2*time.Millisecond)
	}
	b.Record(9*time.Millisecond, time.Microsecond, 10*time.Millisecond)
	f := FairnessOf([]*Recorder{a, b, nil})
	if f.Workers != 3 || f.StarvedWorkers != 1 || f.MinAcquisitions != 0 || f.MaxAcquisitions != 3 {
		t.Fatalf("%+v", f)
	}
	if want := 16.0 / (3 * 10); math.Abs(f.JainWorkers-want) > 1e-12 {
		t.Fatalf("jain %v, want %v", f.JainWorkers, want)
	}
	if f.LongestWaitUS < 8990 || f.LongestWaitUS > 9010 || f.WaitP99MinUS > 1001 || len(f.PerWorker) != 3 {
		t.Fatalf("waits: %+v", f)
	}
	if g := NewFIFOFidelity(4, 3); g.Fidelity != 0.75 || NewFIFOFidelity(0, 0).Fidelity != 0 {
		t.Fatalf("fidelity %+v", g)
	}
}
