package results

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMismatchNamesTheField(t *testing.T) {
	start := time.Now()
	base := func() Run {
		r := processRun(t, 1, 2, start, time.Millisecond, 3)
		r.Fleet.RunID, r.Fleet.Processes[0].Version, r.Fleet.Processes[0].Image = "r1", "v1", "img@sha256:1"
		return r
	}
	cases := map[string]func(*Run){
		"driver":          func(r *Run) { r.Driver = "naive" },
		"driver settings": func(r *Run) { r.DriverSettings = map[string]string{"handoff": "0"} },
		"keys":            func(r *Run) { r.Keys = 7 },
		"concurrency":     func(r *Run) { r.Concurrency = 9 },
		"seed":            func(r *Run) { r.Seed = 2 },
		"warmup_s":        func(r *Run) { r.WarmupS = 3 },
		"procs":           func(r *Run) { r.Fleet.Procs = 3 },
		"start_at":        func(r *Run) { r.Fleet.StartAt = start.Add(time.Second) },
		"run_id":          func(r *Run) { r.Fleet.RunID = "r2" },
		"version":         func(r *Run) { r.Fleet.Processes[0].Version = "v2" },
		"image":           func(r *Run) { r.Fleet.Processes[0].Image = "img@sha256:2" },
	}
	for want, change := range cases {
		a, b := base(), base()
		change(&b)
		if field, _, _ := Mismatch(&a, &b); field != want {
			t.Errorf("changed %s: Mismatch says %q", want, field)
		}
		first := processRun(t, 0, 2, start, time.Millisecond, 3)
		first.Fleet.RunID, first.Fleet.Processes[0].Version, first.Fleet.Processes[0].Image = "r1", "v1", "img@sha256:1"
		g := NewMerger()
		if err := g.Add(&first); err != nil {
			t.Fatal(err)
		}
		if err := g.Add(&b); !errors.Is(err, ErrFleetMismatch) || !strings.Contains(err.Error(), "process 1 differs from process 0 in "+want) {
			t.Errorf("changed %s: %v", want, err)
		}
	}
	a, b := base(), base()
	if field, _, _ := Mismatch(&a, &b); field != "" {
		t.Errorf("equal shares differ in %s", field)
	}
}

// TestMergerIsOrderFree adds shares in any order and gets the run MergeProcesses gives: processes
// and workers in index order, checkers every process ran, the referee's counts added up.
func TestMergerIsOrderFree(t *testing.T) {
	start := time.Now()
	parts := []Run{
		processRun(t, 0, 3, start, 100*time.Microsecond, 5, 6),
		processRun(t, 1, 3, start, 200*time.Microsecond, 7, 8),
		processRun(t, 2, 3, start, 300*time.Microsecond, 9, 10),
	}
	for i := range parts {
		parts[i].Checkers = []string{CheckerInProcess, CheckerSharedMemory, CheckerReferee}
		parts[i].Referee = &Referee{Addr: "ref:1", Entries: 10, Violations: int64(i), Examples: []string{"x"}}
		parts[i].Resource = &Resource{Kind: "fenced", Writes: 20, TokenWrites: 20, CorruptWrites: int64(i), StaleRejected: 2, LeasesLostAtRelease: 1}
	}
	parts[1].Checkers = []string{CheckerInProcess, CheckerReferee} // one process without the arena
	// Stalls are carried out by the process stalled, and kept whichever share they come in.
	parts[2].Faults = []Fault{{Spec: "stall:gen3@1s+1s", Action: "stall", Node: "gen3", AtS: 1, ForS: 1}}
	parts[0].Faults = []Fault{{Spec: "stall:gen1@0.5s+1s", Action: "stall", Node: "gen1", AtS: 0.5, ForS: 1}}
	want, err := MergeProcesses(parts)
	if err != nil {
		t.Fatal(err)
	}
	g := NewMerger()
	for _, i := range []int{2, 0, 1} {
		if err := g.Add(&parts[i]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := g.Run()
	if err != nil {
		t.Fatal(err)
	}
	if got.Acquisitions != want.Acquisitions || got.Histograms != want.Histograms ||
		!slices.Equal(got.Fairness.WorkerAcquisitions, want.Fairness.WorkerAcquisitions) ||
		got.Fleet.Processes[2].Index != 2 {
		t.Errorf("out of order: %d acquisitions, workers %v; in order: %d, %v", got.Acquisitions, got.Fairness.WorkerAcquisitions, want.Acquisitions, want.Fairness.WorkerAcquisitions)
	}
	if len(got.Faults) != 2 || got.Faults[0].Node != "gen1" || got.Faults[1].Node != "gen3" || !slices.Equal(got.Faults, want.Faults) {
		t.Errorf("faults %+v; want both stalls, gen1's first, as in order (%+v)", got.Faults, want.Faults)
	}
	if !slices.Equal(got.Checkers, []string{CheckerInProcess, CheckerReferee}) {
		t.Errorf("checkers %v: want those every process ran", got.Checkers)
	}
	if r := got.Referee; r == nil || r.Entries != 30 || r.Violations != 3 || len(r.Examples) != 3 || got.Violations < 3 {
		t.Errorf("referee %+v, violations %d: want the processes' counts added", r, got.Violations)
	}
	if r := got.Resource; r == nil || *r != (Resource{Kind: "fenced", Writes: 60, TokenWrites: 60, CorruptWrites: 3, StaleRejected: 6, LeasesLostAtRelease: 3}) {
		t.Errorf("resource %+v: want the processes' counts added", r)
	}
	if got.Resource == parts[0].Resource || got.Resource == want.Resource {
		t.Error("the merged resource shares a process's, or another merge's")
	}
}

func TestStartSpreadWarnsAboveWarmup(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var parts []Run
	for i, late := range []time.Duration{2 * time.Millisecond, 1500 * time.Millisecond} {
		p := processRun(t, i, 2, start, time.Millisecond, 3)
		p.SetClock("10.0.0.5:6379", -30*time.Second, 80*time.Microsecond, 7, start.Add(late))
		parts = append(parts, p)
	}
	m, err := MergeProcesses(parts)
	if err != nil {
		t.Fatal(err)
	}
	if m.Fleet.StartSpreadMS != 1498 || len(m.Fleet.Warnings) != 1 || !strings.Contains(m.Fleet.Warnings[0], "1498.0ms apart") {
		t.Errorf("spread %g, warnings %q: want 1498 ms, above the 1 s warm-up", m.Fleet.StartSpreadMS, m.Fleet.Warnings)
	}
	if c := m.Fleet.Processes[1].Clock; c == nil || c.OffsetMS != -30000 || c.StartErrorMS != 1500 || c.Samples != 7 {
		t.Errorf("process 1's clock %+v", c)
	}
	parts[1].Fleet.Processes[0].Clock.Source = ClockLocal
	if m, _ := MergeProcesses(parts); m.Fleet.StartSpreadMS != 0 || len(m.Fleet.Warnings) != 0 {
		t.Errorf("a process on its own clock: spread %g, warnings %q; want none by the deployment's clock", m.Fleet.StartSpreadMS, m.Fleet.Warnings)
	}
}

// MismatchText rewords a fleet mismatch and leaves other errors alone; Processes counts the
// processes of the runs; WriteMerged writes nothing for a file without runs.
func TestMismatchTextProcesses(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("a.json: %w: field seed differs", ErrFleetMismatch)
	if got, want := MismatchText(err), "the results are not the processes of one run: a.json: field seed differs"; got != want {
		t.Errorf("MismatchText = %q; want %q", got, want)
	}
	if got := MismatchText(errors.New("other")); got != "other" {
		t.Errorf("MismatchText(other) = %q", got)
	}
	f := &File{Runs: []Run{{Fleet: &Fleet{Processes: make([]ProcessResult, 3)}}, {}}}
	if n := f.Processes(); n != 3 {
		t.Errorf("Processes = %d; want 3", n)
	}
	var b strings.Builder
	if err := WriteMerged(&b, &File{}); err != nil || b.Len() != 0 {
		t.Errorf("WriteMerged(no runs) = %v, %q", err, b.String())
	}
}
