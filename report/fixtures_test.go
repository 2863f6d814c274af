package report

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// The result files of these tests are made the way lockbench run makes them: real Recorders
// (and TimelineRecorders) record latencies, Merge and Run.Fill turn them into runs, and
// results.WriteFile and ReadFile take them through the JSON file format.

// runSpec says what fakeRun records.
type runSpec struct {
	driver      string
	round       int
	n           int           // cycles
	median      time.Duration // of the acquire latency, log-normal around it
	tput        float64       // acquisitions per second the run reports
	timeline    bool
	seed        uint64
	complete    bool
	concurrency int
}

// fakeRun records s.n cycles with log-normal acquire latencies around s.median (seeded, so
// every test run sees the same data) and fills a Run from them.
func fakeRun(t testing.TB, s runSpec) results.Run {
	t.Helper()
	rng := rand.New(rand.NewPCG(s.seed, 7))
	rec := results.NewRecorder()
	var tl *results.TimelineRecorder
	if s.timeline {
		tl = results.NewTimelineRecorder([]*results.Recorder{rec}, 10*time.Millisecond)
		tl.Start()
	}
	for i := 0; i < s.n; i++ {
		acq := time.Duration(float64(s.median) * math.Exp(0.8*rng.NormFloat64()))
		rec.Record(acq, acq/4, acq+acq/4)
		if s.timeline && i%(s.n/4+1) == 0 {
			// Spread the cycles over several intervals: with 12 ms a loaded CI machine's late
			// ticks once left fewer than the three a timeline chart needs.
			time.Sleep(30 * time.Millisecond)
		}
	}
	conc := s.concurrency
	if conc == 0 {
		conc = 16
	}
	r := results.Run{
		Driver: s.driver, Round: s.round, Workload: "contention", Topology: "single", TopologySpec: "single",
		Concurrency: conc, Keys: 100, KeyDist: "uniform", Seed: 1, WarmupS: 0.5,
		Complete: s.complete, StartedAt: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC),
	}
	if !s.complete {
		r.Incomplete = "interrupted"
	}
	if tl != nil {
		timeline, err := tl.Stop()
		if err != nil {
			t.Fatal(err)
		}
		r.Timeline = timeline
	}
	if s.n > 0 {
		if err := r.Fill(results.Merge(rec), time.Duration(float64(s.n)/s.tput*float64(time.Second))); err != nil {
			t.Fatal(err)
		}
	} else if err := r.Fill(nil, 0); err != nil {
		t.Fatal(err)
	}
	return r
}

// newFile returns a result file of runs, as lockbench run starts one.
func newFile(runs ...results.Run) *results.File {
	f := results.NewFile("test", []string{"lockbench", "run"})
	f.RedisVersion = "7.0.15"
	f.Topology = &results.Topology{Kind: "single", Spec: "single", Provider: "native",
		Nodes: []results.TopologyNode{{Addr: "127.0.0.1:40001", Role: "master"}}}
	f.Runs = runs
	return f
}

// roundTrip writes f as lockbench run does and reads it back as lockbench report does.
func roundTrip(t testing.TB, f *results.File) Source {
	t.Helper()
	path, err := results.WriteFile(t.TempDir(), f)
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Source{Name: filepath.Base(path), File: back}
}

// repeatFile is lockcore and naive, three interleaved rounds each, with timelines.
func repeatFile(t testing.TB) *results.File {
	var runs []results.Run
	for round := 1; round <= 3; round++ {
		runs = append(runs,
			fakeRun(t, runSpec{driver: "lockcore", round: round, n: 4000, median: 150 * time.Microsecond, tput: 47000 + 1500*float64(round), timeline: true, seed: uint64(round), complete: true}),
			fakeRun(t, runSpec{driver: "naive", round: round, n: 3000, median: 400 * time.Microsecond, tput: 32000 - 900*float64(round), timeline: true, seed: uint64(10 + round), complete: true}))
	}
	f := newFile(runs...)
	f.Repeat, f.Baseline = 3, "lockcore"
	return f
}

// incompleteFile is what Ctrl-C leaves: one finished run, one cut short and one that never
// reached its measured phase.
func incompleteFile(t testing.TB) *results.File {
	f := newFile(
		fakeRun(t, runSpec{driver: "lockcore", n: 3000, median: 150 * time.Microsecond, tput: 45000, timeline: true, seed: 1, complete: true}),
		fakeRun(t, runSpec{driver: "naive", n: 800, median: 400 * time.Microsecond, tput: 30000, timeline: true, seed: 2}),
		fakeRun(t, runSpec{driver: "redsync", seed: 3}),
	)
	f.Complete = false
	return f
}

// skippedFile ran lockcore and skipped naive, which has no read-write lock.
func skippedFile(t testing.TB) *results.File {
	f := newFile(fakeRun(t, runSpec{driver: "lockcore", n: 2000, median: 200 * time.Microsecond, tput: 30000, timeline: true, seed: 4, complete: true}))
	f.Skipped = []results.Skip{{Driver: "naive", Workload: "rw", Topology: "single", Reason: "no read-write lock"}}
	return f
}

// emptyFile has no runs: every driver was skipped.
func emptyFile() *results.File {
	f := newFile()
	f.Skipped = []results.Skip{{Driver: "naive", Workload: "rw", Topology: "single", Reason: "no read-write lock"}}
	return f
}

// sweepFile is a rate sweep of lockcore and naive, recorded as lockbench sweep records one:
// latencies rise with the load, naive saturates earlier, each driver stops after its first
// saturated step, and the knee is the highest step that was achieved and kept the SLO.
func sweepFile(t testing.TB, slo results.SweepSLO) *results.File {
	f := newFile()
	loads := []float64{5000, 10000, 20000, 40000, 80000}
	sw := &results.Sweep{Mode: results.SweepRate, Loads: loads, SLO: slo, SaturationMargin: 0.05, StopFactor: 10}
	for _, d := range []struct {
		name     string
		capacity float64
		base     time.Duration
	}{{"lockcore", 40000, 150 * time.Microsecond}, {"naive", 20000, 300 * time.Microsecond}} {
		sd := results.SweepDriver{Driver: d.name}
		for i, load := range loads {
			achieved := min(load, d.capacity*(1+0.05*float64(i)))
			median := time.Duration(float64(d.base) * (1 + math.Pow(load/d.capacity, 3)))
			run := fakeRun(t, runSpec{driver: d.name, n: 2000, median: median, tput: achieved, seed: uint64(100 + i), complete: true})
			h, _, _, err := run.Histograms.Decode()
			if err != nil {
				t.Fatal(err)
			}
			st := results.SweepStep{Step: i + 1, Load: load, Run: len(f.Runs), ThroughputPerS: achieved,
				LatencyUS: float64(h.ValueAtQuantile(slo.Percentile)), Verdict: results.VerdictOK}
			switch {
			case achieved < (1-sw.SaturationMargin)*load:
				st.Verdict, st.Reason = results.VerdictSaturated, "achieved below the target"
			case st.LatencyUS > slo.LimitUS:
				st.Verdict = results.VerdictOver
			default:
				sd.KneeStep, sd.KneeLoad = st.Step, load
			}
			f.Runs = append(f.Runs, run)
			sd.Steps = append(sd.Steps, st)
			if st.Verdict == results.VerdictSaturated {
				sd.StoppedEarly, sd.StopReason = i+1 < len(loads), "saturated at "+strconv.FormatFloat(load, 'f', -1, 64)+"/s"
				break
			}
		}
		sw.Drivers = append(sw.Drivers, sd)
	}
	f.Sweep = sw
	return f
}
