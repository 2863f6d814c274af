package results

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestGrantWatch(t *testing.T) {
	w := NewGrantWatch(3)
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

	w.Granted(at(0), at(1)) // before any mark: nothing to find
	if _, ok := w.First(0); ok {
		t.Fatal("First of an unset mark")
	}
	w.Mark(0, at(10))
	w.Granted(at(5), at(12))  // began before the mark: does not count, though granted after it
	w.Granted(at(20), at(30)) // the first to count
	w.Granted(at(11), at(25)) // began after the mark, granted earlier: the first grant now
	w.Granted(at(40), at(50))
	if d, ok := w.First(0); !ok || d != 15*time.Millisecond {
		t.Errorf("First(0) = %v, %v; want 15ms (mark at 10ms, grant at 25ms)", d, ok)
	}
	if _, ok := w.First(1); ok {
		t.Error("First(1): mark 1 was never set")
	}
	w.Mark(1, at(60))
	if _, ok := w.First(1); ok {
		t.Error("First(1): no grant after mark 1 yet")
	}
	w.Granted(at(60), at(61))
	if d, ok := w.First(1); !ok || d != time.Millisecond {
		t.Errorf("First(1) = %v, %v; want 1ms", d, ok)
	}
	if d, _ := w.First(0); d != 15*time.Millisecond {
		t.Errorf("a later grant changed First(0) to %v", d)
	}
	w.Mark(7, at(0)) // out of range: ignored
	if _, ok := w.First(7); ok {
		t.Error("First of a mark out of range")
	}
}

// Many workers report at once; the first grant found is the earliest of those that count.
func TestGrantWatchConcurrent(t *testing.T) {
	w := NewGrantWatch(1)
	t0 := time.Now()
	w.Mark(0, t0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				start := t0.Add(time.Duration(i) * time.Microsecond)
				w.Granted(start, start.Add(time.Duration(100+g)*time.Microsecond))
			}
		})
	}
	wg.Wait()
	if d, ok := w.First(0); !ok || d != 100*time.Microsecond {
		t.Errorf("First = %v, %v; want 100µs", d, ok)
	}
}

// The per-grant report is on every cycle's path: it must not allocate.
func TestRecorderGrantedDoesNotAllocate(t *testing.T) {
	r := NewRecorder()
	w := NewGrantWatch(MaxGrantMarks)
	r.Watch(w)
	now := time.Now()
	for i := range MaxGrantMarks {
		w.Mark(i, now)
	}
	if n := testing.AllocsPerRun(1000, func() { r.Granted(now, now.Add(time.Millisecond)) }); n != 0 {
		t.Errorf("Recorder.Granted allocates %v times per call", n)
	}
}

func BenchmarkRecorderGranted(b *testing.B) {
	r := NewRecorder()
	w := NewGrantWatch(4)
	r.Watch(w)
	now := time.Now()
	w.Mark(0, now)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Granted(now, now.Add(time.Duration(i)))
	}
}

func TestWriteFaults(t *testing.T) {
	var none bytes.Buffer
	if err := WriteFaults(&none, []Run{{Driver: "lockcore"}}); err != nil || none.Len() != 0 {
		t.Fatalf("runs without faults: %q, %v; want nothing", none.String(), err)
	}
	kill := Fault{Spec: "kill:master@1s", Action: "kill", Node: "master", Addr: "127.0.0.1:7000", AtS: 1, Fired: true, FiredS: 1.001, TookS: 0.002, LastedS: 0.002}
	kill.SetFirstGrant(2500 * time.Millisecond)
	late := Fault{Spec: "kill:replica1@9s", Action: "kill", Node: "replica1", AtS: 9, Error: "not fired: the phase ended first"}
	run := Run{Driver: "lockcore", Round: 1, Acquisitions: 300, Violations: 0, ErrorsByKind: map[string]int64{"acquire": 12, "release": 1},
		Faults: []Fault{kill, late}, Timeline: &Timeline{IntervalS: 1}}
	for i, acq := range []int64{100, 50, 0, 0, 150} {
		var errs int64
		if acq == 0 {
			errs = 6
		}
		run.Timeline.Points = append(run.Timeline.Points, TimelinePoint{StartS: float64(i), DurationS: 1, Acquisitions: acq, ThroughputPerS: float64(acq), Errors: errs, AcquireP99US: 1500})
	}
	var out bytes.Buffer
	if err := WriteFaults(&out, []Run{run}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"faults: lockcore round 1: 300 acquisitions, errors acquire=12 release=1, violations 0",
		"kill:master@1s", "master 127.0.0.1:7000", "1.001s", "2.5s",
		"kill:replica1@9s", "not fired: the phase ended first",
		"1s points",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	// The point the fault fired in is marked, and the gap shows as points without acquisitions.
	lines := strings.Split(s, "\n")
	marked, gap := 0, 0
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 6 && f[0] == "*" && f[1] == "1.0s" {
			marked++
		}
		if len(f) == 5 && f[1] == "0" && f[3] == "6" && f[4] == "-" {
			gap++
		}
	}
	if marked != 1 || gap != 2 {
		t.Errorf("marked points %d (want 1), gap points %d (want 2):\n%s", marked, gap, s)
	}
	var fg Fault
	if _, ok := fg.FirstGrant(); ok {
		t.Error("FirstGrant of a fault without one")
	}
}
