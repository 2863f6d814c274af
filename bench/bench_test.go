package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/lockbench/lockbench/workloads"
)

// lines is a Reporter that keeps the lines; safe for concurrent use.
type lines struct {
	mu sync.Mutex
	l  []string
}

func (l *lines) Line(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.l = append(l.l, fmt.Sprintf(format, a...))
}

func (l *lines) Progress(workloads.Progress) {}
func (l *lines) SetRound(int, int)           {}
func (l *lines) Clear()                      {}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.l, "\n")
}

var _ Reporter = (*lines)(nil)

// openSingle starts a private native redis-server for the test, skipping (or, in CI, failing)
// when redis-server is not on PATH, and closes it when the test ends.
func openSingle(t *testing.T) *target.Target {
	t.Helper()
	tg, err := target.Open(t.Context(), target.Spec{})
	if errors.Is(err, compose.ErrRedisServerNotFound) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (CI must install redis-server: scripts/install-deps.sh)", err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// short is a workload config for runs that only need to happen, not to measure well.
func short() workloads.Config {
	return workloads.Config{Concurrency: 2, Keys: 20, Duration: 300 * time.Millisecond, Warmup: -1}
}

func threshold(t *testing.T, expr string) thresholds.Threshold {
	t.Helper()
	th, err := thresholds.Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := Spec{Drivers: []string{"naive"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("zero spec with one driver: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"no driver", func(s *Spec) { s.Drivers = nil }, "--driver needs at least one driver"},
		{"unknown driver", func(s *Spec) { s.Drivers = []string{"nope"} }, "--driver: "},
		{"driver twice", func(s *Spec) { s.Drivers = []string{"naive", "naive"} }, "--driver lists naive twice"},
		{"baseline not a driver", func(s *Spec) { s.Baseline = "lockcore" }, `--baseline "lockcore" is not one of --driver naive`},
		{"negative concurrency", func(s *Spec) { s.Config.Concurrency = -1 }, "--concurrency -1 must be at least 1"},
		{"negative duration", func(s *Spec) { s.Config.Duration = -time.Second }, "--duration -1s must be positive"},
		{"repeat too high", func(s *Spec) { s.Repeat = MaxRepeat + 1 }, "--repeat 1001: want 1 to 1000"},
		{"read ratio", func(s *Spec) { s.Config.ReadRatio = 1.5 }, "--read-ratio 1.5: want 0 to 1"},
		{"blank prefix", func(s *Spec) { s.Config.KeyPrefix = "  " }, "--key-prefix must not be empty"},
		{"unknown workload", func(s *Spec) { s.Workload = "nope" }, "--workload: "},
		{"fanout over keys", func(s *Spec) { s.Config.Keys = 2; s.Config.Fanout = 3 }, "--fanout 3: want 1 to 2"},
		{"threshold on another driver", func(s *Spec) { s.Thresholds = []thresholds.Threshold{threshold(t, "lockcore p99<5ms")} }, `--threshold "lockcore p99<5ms" names driver lockcore, which is not in --driver naive`},
		{"negative stall threshold", func(s *Spec) { s.StallThreshold = -time.Second }, "--stall-threshold -1s must not be negative"},
	} {
		s := ok
		s.Drivers = slices.Clone(ok.Drivers)
		tc.edit(&s)
		err := s.Validate()
		if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrBadSpec, %q", tc.name, err, tc.want)
		}
	}
	// A configuration the workload refuses wraps its own sentinel too, and keeps its text.
	s := ok
	s.Config.KeyDist = "gaussian"
	if err := s.Validate(); !errors.Is(err, ErrBadSpec) || !errors.Is(err, workloads.ErrBadConfig) || strings.HasPrefix(err.Error(), ErrBadSpec.Error()) {
		t.Errorf("bad key distribution: %v; want ErrBadSpec and workloads.ErrBadConfig, the workload's message", err)
	}
}

// Two drivers over two rounds run interleaved, rotating the order; the outcomes are values: the
// runs in the file in the order they ran, the thresholds checked, nothing failed.
func TestRunRoundsInterleaved(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	rep := &lines{}
	spec := Spec{Drivers: []string{"naive", "lockcore"}, Repeat: 2, Config: short(), Topology: "single",
		Thresholds: []thresholds.Threshold{threshold(t, "violations==0"), threshold(t, "throughput>1e12")}}
	res, err := Run(t.Context(), tg, spec, Options{Reporter: rep})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.File.Runs {
		got = append(got, fmt.Sprintf("%s/%d", r.Driver, r.Round))
		if r.TopologySpec != "single" || r.Acquisitions == 0 || r.Audit == nil {
			t.Errorf("run %s/%d: topology %q, %d acquisitions, audit %v; want single, some, audited", r.Driver, r.Round, r.TopologySpec, r.Acquisitions, r.Audit)
		}
	}
	if want := []string{"naive/1", "lockcore/1", "lockcore/2", "naive/2"}; !slices.Equal(got, want) {
		t.Errorf("runs %v; want %v", got, want)
	}
	if res.Failed || res.Aborted || res.NotStarted != 0 || !res.File.Complete {
		t.Errorf("failed %v, aborted %v, %d not started, complete %v; want a clean session\n%s", res.Failed, res.Aborted, res.NotStarted, res.File.Complete, rep)
	}
	if res.File.Repeat != 2 || res.File.Baseline != "naive" {
		t.Errorf("file repeat %d, baseline %q; want 2, the first driver", res.File.Repeat, res.File.Baseline)
	}
	if len(res.Thresholds) != 2 || res.ThresholdsFailed != 1 {
		t.Errorf("thresholds %+v, %d failed; want 2 checked, the throughput one failed", res.Thresholds, res.ThresholdsFailed)
	}
	if !strings.Contains(rep.String(), "[4/4] round 2/2 naive: contention on single, 2 workers, 20 keys") {
		t.Errorf("progress lines lack the last run's start:\n%s", rep)
	}
}

// A driver that cannot run the workload is skipped once, with its reason, and left out of later
// rounds; the skip does not fail the session.
func TestRunSkipsUnsupported(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	rep := &lines{}
	spec := Spec{Drivers: []string{"naive", "lockcore"}, Workload: "reentrancy", Repeat: 2, Config: short(), Topology: "single"}
	res, err := Run(t.Context(), tg, spec, Options{Reporter: rep})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.File.Skipped) != 1 || res.File.Skipped[0].Driver != "naive" || res.File.Skipped[0].Reason == "" {
		t.Errorf("skipped %+v; want naive once, with its reason", res.File.Skipped)
	}
	if len(res.File.Runs) != 2 || res.File.Runs[0].Driver != "lockcore" || res.File.Runs[1].Driver != "lockcore" {
		t.Errorf("%d runs; want lockcore's two", len(res.File.Runs))
	}
	if res.Failed || !res.File.Complete {
		t.Errorf("a skip failed the session (failed %v, complete %v):\n%s", res.Failed, res.File.Complete, rep)
	}
}

// AbortOnFail stops the first run once a live threshold fails and starts no other; the run is
// kept, marked with why it stopped.
func TestRunAbortOnFail(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	cfg := short()
	cfg.Duration = time.Minute // an abort that did not happen would show as a test timeout
	spec := Spec{Drivers: []string{"naive", "lockcore"}, Config: cfg, Topology: "single", AbortOnFail: true,
		TimelineInterval: 100 * time.Millisecond, Thresholds: []thresholds.Threshold{threshold(t, "throughput>1e12")}}
	res, err := Run(t.Context(), tg, spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Aborted || res.NotStarted != 1 || len(res.File.Runs) != 1 || res.File.Runs[0].Aborted == "" {
		t.Errorf("aborted %v, %d not started, %d runs; want the first run aborted, the second not started", res.Aborted, res.NotStarted, len(res.File.Runs))
	}
}

// Once ctx has ended no run starts, and the session says how many it left out.
func TestRunCancelled(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rep := &lines{}
	res, err := Run(ctx, tg, Spec{Drivers: []string{"naive", "lockcore"}, Repeat: 3, Config: short()}, Options{Reporter: rep})
	if err != nil {
		t.Fatal(err)
	}
	if res.NotStarted != 6 || len(res.File.Runs) != 0 || res.File.Complete || !strings.Contains(rep.String(), "interrupted: 6 of 6 runs not started") {
		t.Errorf("%d not started, %d runs; want none of 6 run\n%s", res.NotStarted, len(res.File.Runs), rep)
	}
}

// A run made elsewhere (Options.Remote) is judged as one made here: a run without acquisitions
// fails, with its cause in the result, and the hook's own verdict counts too.
func TestRunRemote(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	var calls []string
	remote := func(_ context.Context, r *Remote) (results.Run, error) {
		calls = append(calls, fmt.Sprintf("%s/%d", r.Driver, r.Round))
		r.Failed = r.Driver == "lockcore" // a lost process, say
		return results.Run{Driver: r.Driver, Acquisitions: map[string]int64{"naive": 0, "lockcore": 10}[r.Driver]}, nil
	}
	for _, tc := range []struct {
		driver string
	}{{"naive"}, {"lockcore"}} {
		res, err := Run(t.Context(), tg, Spec{Drivers: []string{tc.driver}, Config: short(), Topology: "single"}, Options{Remote: remote})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Failed || len(res.File.Runs) != 1 {
			t.Errorf("%s: failed %v, %d runs; want a failed run, recorded", tc.driver, res.Failed, len(res.File.Runs))
		}
		if r := res.File.Runs[0]; tc.driver == "naive" && (len(r.Failed) != 1 || !strings.Contains(r.Failed[0], "0 acquisitions")) {
			t.Errorf("naive: failed %q; want the 0 acquisitions named", r.Failed)
		}
	}
	if !slices.Equal(calls, []string{"naive/1", "lockcore/1"}) {
		t.Errorf("hook called for %v", calls)
	}
}

// A sweep's step (Session.RunOne) runs at its own load and stops on its own live check; a skip
// comes back as an error wrapping drivers.ErrUnsupported, with the skip in the Outcome.
func TestRunOneStep(t *testing.T) {
	t.Parallel()
	tg := openSingle(t)
	cfg := short()
	cfg.Duration = time.Minute // a check that did not stop the phase would show as a test timeout
	s, err := NewSession(tg, Spec{Drivers: []string{"naive"}, Workload: "reentrancy", Config: cfg, TimelineInterval: 100 * time.Millisecond}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.RunOne(t.Context(), Step{Driver: "naive", Round: 1, Seq: 1, Total: 1})
	if !errors.Is(err, drivers.ErrUnsupported) || o.Skip == nil || o.Run != nil || o.Failed {
		t.Errorf("naive on reentrancy: %+v, %v; want a skip, not a failure", o, err)
	}

	s, err = NewSession(tg, Spec{Drivers: []string{"lockcore"}, Config: cfg, TimelineInterval: 100 * time.Millisecond}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop := func(string, workloads.Live) string { return "over the SLO" }
	o, err = s.RunOne(t.Context(), Step{Driver: "lockcore", Round: 1, Seq: 1, Total: 1, Concurrency: 3, Abort: stop})
	if err != nil {
		t.Fatal(err)
	}
	if o.Run == nil || o.Run.Concurrency != 3 || o.Run.Aborted != "over the SLO" || !o.Aborted {
		t.Errorf("outcome %+v; want a run of 3 workers stopped by the step's check", o)
	}
}
