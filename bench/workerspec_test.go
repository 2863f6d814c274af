package bench

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/thresholds"
	"github.com/lockbench/lockbench/workloads"
)

// Validate refuses a worker that cannot run as given, naming the flag, before it reaches
// anything; the zero fields are defaults, not mistakes.
func TestWorkerSpecValidate(t *testing.T) {
	t.Parallel()
	ok := WorkerSpec{Driver: "naive", Addrs: []string{"127.0.0.1:1"}}
	cases := []struct {
		name string
		edit func(w *WorkerSpec)
		want string // "" for valid
	}{
		{"defaults", func(*WorkerSpec) {}, ""},
		{"index of procs", func(w *WorkerSpec) { w.Procs, w.Index = 3, 2 }, ""},
		{"index past procs", func(w *WorkerSpec) { w.Procs, w.Index = 3, 3 }, "--index 3: want 0 to 2"},
		{"negative index", func(w *WorkerSpec) { w.Index = -1 }, "--index -1"},
		{"too many procs", func(w *WorkerSpec) { w.Procs = MaxProcs + 1 }, "--procs 257"},
		{"clock", func(w *WorkerSpec) { w.Clock = "ntp" }, `--clock "ntp"`},
		{"no address", func(w *WorkerSpec) { w.Addrs = nil }, "give its --addr"},
		{"referee without run", func(w *WorkerSpec) { w.Referee.Addr = "10.0.0.1:6379" }, "--referee needs --run ID"},
		{"collect without run", func(w *WorkerSpec) { w.Collect.Addr = "10.0.0.1:6379" }, "--collect needs --run ID"},
		{"resource without referee", func(w *WorkerSpec) { w.Resource = "plain" }, "--resource needs --referee"},
		{"stall past the phase", func(w *WorkerSpec) {
			w.Procs, w.Config.Duration, w.Stalls = 2, 10*time.Second, []Stall{{At: 9 * time.Second, For: 5 * time.Second}}
		}, "ends at 14s"},
		{"stall in the phase", func(w *WorkerSpec) {
			w.Procs, w.Config.Duration, w.Stalls = 2, 10*time.Second, []Stall{{At: 3 * time.Second, For: 2 * time.Second}}
		}, ""},
		{"unknown driver", func(w *WorkerSpec) { w.Driver = "nope" }, `unknown driver "nope"`},
		{"bad config", func(w *WorkerSpec) { w.Config = workloads.Config{Depth: workloads.MaxDepth + 1} }, "--depth"},
	}
	for _, tc := range cases {
		w := ok
		tc.edit(&w)
		err := w.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v; want valid", tc.name, err)
		case tc.want != "" && (!errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want ErrBadSpec containing %q", tc.name, err, tc.want)
		}
	}
}

// ForWorker refuses what run's flags can ask for but one worker process does not do, naming
// the flag and what to do instead.
func TestSpecForWorker(t *testing.T) {
	t.Parallel()
	one := Spec{Drivers: []string{"naive"}, Repeat: 1}
	if err := one.ForWorker(false); err != nil {
		t.Fatalf("one driver, once: %v", err)
	}
	for _, tc := range []struct {
		name   string
		edit   func(*Spec)
		starts bool
		want   string
	}{
		{"two drivers", func(s *Spec) { s.Drivers = []string{"naive", "lockcore"} }, false, "a worker runs one driver, not 2 (--driver naive,lockcore)"},
		{"repeat", func(s *Spec) { s.Repeat = 2 }, false, "a worker runs once"},
		{"threshold", func(s *Spec) { s.Thresholds = []thresholds.Threshold{threshold(t, "p99<1ms")} }, false, "--threshold is checked by lockbench run"},
		{"provider", func(*Spec) {}, true, "--provider and --image are for lockbench run"},
	} {
		s := one
		tc.edit(&s)
		if err := s.ForWorker(tc.starts); !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrBadSpec containing %q", tc.name, err, tc.want)
		}
	}
}

// A stall of this process is carried out as the one lockbench run gives generator Index+1.
func TestWorkerStallPlan(t *testing.T) {
	t.Parallel()
	w := WorkerSpec{Index: 1, Stalls: []Stall{{At: 2500 * time.Millisecond, For: 1500 * time.Millisecond}}}
	got := w.stallPlan()
	want := []workloads.Stall{{At: 2500 * time.Millisecond, For: 1500 * time.Millisecond, Node: "gen2", Spec: "stall:gen2@2.5s+1.5s"}}
	if !slices.Equal(got, want) {
		t.Errorf("plan %+v, want %+v", got, want)
	}
}
