package results

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// processRun is one process's run: acquisitions cycles per worker with acquire latencies from
// base up, an error, and its own timeline.
func processRun(t *testing.T, index, procs int, start time.Time, base time.Duration, perWorker ...int) Run {
	t.Helper()
	recs := make([]*Recorder, len(perWorker))
	for i := range recs {
		recs[i] = NewRecorder()
	}
	tr := NewTimelineRecorder(recs, time.Second)
	tr.Start()
	for i, n := range perWorker {
		for j := range n {
			d := base + time.Duration(j)*time.Microsecond
			recs[i].Record(d, d/2, 2*d)
		}
	}
	recs[0].Error("acquire")
	tl, err := tr.Stop()
	if err != nil {
		t.Fatal(err)
	}
	r := Run{Driver: "lockcore", Workload: "contention", Topology: "single", Concurrency: len(perWorker), Keys: 1,
		KeyDist: "uniform", Seed: 1, WarmupS: 1, StartedAt: start, Complete: true, Timeline: tl}
	if err := r.Fill(Merge(recs...), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	r.SetWorkerFairness(WorkerAcquisitions(recs))
	r.Violations = int64(index)
	r.SetProcess(index, procs, start, "host", 100+index, true)
	return r
}

func TestMergeProcessesIsLossless(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	parts := []Run{
		processRun(t, 2, 3, start, 900*time.Microsecond, 10, 30),
		processRun(t, 0, 3, start, 100*time.Microsecond, 100, 100),
		processRun(t, 1, 3, start, 5*time.Millisecond, 1, 50),
	}
	m, err := MergeProcesses(parts)
	if err != nil {
		t.Fatal(err)
	}
	var acq, errs, viol int64
	var tput, maxUS float64
	for _, p := range parts {
		acq += p.Acquisitions
		errs += p.Errors
		viol += p.Violations
		tput += p.ThroughputPerS
		maxUS = max(maxUS, p.AcquireLatencyUS.Max)
	}
	if m.Acquisitions != acq || m.Errors != errs || m.Violations != viol || m.ThroughputPerS != tput {
		t.Errorf("merged acq %d errors %d violations %d tput %g, want the sums %d %d %d %g", m.Acquisitions, m.Errors, m.Violations, m.ThroughputPerS, acq, errs, viol, tput)
	}
	a, _, _, err := m.Histograms.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if a.TotalCount() != acq || float64(a.Max()) != maxUS || m.AcquireLatencyUS.Max != maxUS {
		t.Errorf("merged histogram count %d max %d (summary max %g), want %d and %g", a.TotalCount(), a.Max(), m.AcquireLatencyUS.Max, acq, maxUS)
	}
	if m.Concurrency != 6 {
		t.Errorf("merged concurrency %d, want the 6 workers of all processes", m.Concurrency)
	}
	if !m.Complete || m.Fleet == nil || len(m.Fleet.Processes) != 3 || len(m.Fleet.Lost) != 0 {
		t.Fatalf("merged run: complete %v fleet %+v", m.Complete, m.Fleet)
	}
	for i, p := range m.Fleet.Processes {
		if p.Index != i {
			t.Errorf("process %d listed as %d: want index order", i, p.Index)
		}
	}
	if got := m.Fairness.WorkerAcquisitions; len(got) != 6 || got[0] != 100 || got[5] != 30 {
		t.Errorf("workers %v, want process 0's first and process 2's last", got)
	}
	wantJain := Jain([]int64{200, 51, 40})
	if math.Abs(m.Fairness.JainProcesses-wantJain) > 1e-12 {
		t.Errorf("Jain over processes %g, want %g", m.Fairness.JainProcesses, wantJain)
	}
	if m.Fleet.StartSkewMS != 0 {
		t.Errorf("start skew %gms of processes that started at one instant", m.Fleet.StartSkewMS)
	}
	if tlAcq, tlErr := m.Timeline.Totals(); tlAcq != acq || tlErr != errs {
		t.Errorf("merged timeline adds up to %d acquisitions %d errors, want %d and %d", tlAcq, tlErr, acq, errs)
	}
}

func TestMergeProcessesMarksLostProcesses(t *testing.T) {
	start := time.Now()
	m, err := MergeProcesses([]Run{processRun(t, 0, 3, start, time.Millisecond, 5), processRun(t, 2, 3, start, time.Millisecond, 5)})
	if err != nil {
		t.Fatal(err)
	}
	if m.Complete || len(m.Fleet.Lost) != 1 || m.Fleet.Lost[0] != 1 || !strings.Contains(m.Incomplete, "process 1 of 3") {
		t.Errorf("complete %v lost %v reason %q: want incomplete, naming process 1", m.Complete, m.Fleet.Lost, m.Incomplete)
	}
}

func TestMergeProcessesRefusesOtherRuns(t *testing.T) {
	start := time.Now()
	base := func(i int) Run { return processRun(t, i, 2, start, time.Millisecond, 3) }
	cases := map[string]func() []Run{
		"nothing":      func() []Run { return nil },
		"twice":        func() []Run { return []Run{base(0), base(0)} },
		"driver":       func() []Run { b := base(1); b.Driver = "naive"; return []Run{base(0), b} },
		"keys":         func() []Run { b := base(1); b.Keys = 2; return []Run{base(0), b} },
		"start":        func() []Run { b := base(1); b.Fleet.StartAt = start.Add(time.Second); return []Run{base(0), b} },
		"procs":        func() []Run { b := base(1); b.Fleet.Procs = 3; return []Run{base(0), b} },
		"not a worker": func() []Run { b := base(1); b.Fleet = nil; return []Run{base(0), b} },
		"index":        func() []Run { b := base(1); b.Fleet.Processes[0].Index = 5; return []Run{base(0), b} },
	}
	for name, parts := range cases {
		if _, err := MergeProcesses(parts()); !errors.Is(err, ErrFleetMismatch) {
			t.Errorf("%s: %v, want ErrFleetMismatch", name, err)
		}
	}
}

func TestJain(t *testing.T) {
	for _, c := range []struct {
		xs   []int64
		want float64
	}{{nil, 0}, {[]int64{0, 0}, 0}, {[]int64{5, 5, 5, 5}, 1}, {[]int64{8, 0, 0, 0}, 0.25}, {[]int64{1, 3}, 16.0 / 20}} {
		if got := Jain(c.xs); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Jain(%v) = %g, want %g", c.xs, got, c.want)
		}
	}
}

// TestMergeProcessesAddsWaiting checks that the processes' pub/sub waiting counts add up, with
// the subscribes per acquisition of the merged run.
func TestMergeProcessesAddsWaiting(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	parts := []Run{processRun(t, 0, 2, start, 100*time.Microsecond, 50), processRun(t, 1, 2, start, 100*time.Microsecond, 150)}
	parts[0].SetWaiting(WaitCounts{Subscribes: 10, Unsubscribes: 9, PeakChannels: 4, ChannelsAfter: 1, WokenByMessage: 30, EndedWithoutWake: 2, SubscribeTimeouts: 3})
	parts[1].SetWaiting(WaitCounts{Subscribes: 30, Unsubscribes: 30, PeakChannels: 6, WokenByMessage: 70, EndedWithoutWake: 5})
	m, err := MergeProcesses(parts)
	if err != nil {
		t.Fatal(err)
	}
	w := m.Waiting
	if w == nil || w.Subscribes != 40 || w.Unsubscribes != 39 || w.PeakChannels != 10 || w.ChannelsAfter != 1 ||
		w.WokenByMessage != 100 || w.EndedWithoutWake != 7 || w.SubscribeTimeouts != 3 {
		t.Fatalf("merged waiting %+v: want the sums", w)
	}
	if want := 40 / float64(m.Acquisitions); math.Abs(w.SubscribesPerAcquisition-want) > 1e-12 {
		t.Errorf("subscribes per acquisition %g, want %g", w.SubscribesPerAcquisition, want)
	}
}
