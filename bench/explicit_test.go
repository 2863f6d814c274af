package bench

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/workloads"
)

// flagSpec is a Spec as lockbench run's flag defaults make it.
func flagSpec() Spec {
	return Spec{Drivers: []string{"naive"}, Repeat: 1, Config: workloads.Config{
		Concurrency: workloads.DefaultConcurrency, Keys: workloads.DefaultKeys, Duration: workloads.DefaultDuration,
		Warmup: workloads.DefaultWarmup, ReadRatio: workloads.DefaultReadRatio, Fanout: workloads.DefaultFanout,
		Depth: workloads.DefaultDepth, KeyPrefix: workloads.DefaultKeyPrefix}}
}

// givenOf says the flags named were set, as pflag.FlagSet.Changed would.
func givenOf(names ...string) func(string) bool {
	return func(name string) bool { return slices.Contains(names, name) }
}

// A zero on the command line is refused, or taken as "none", never as the default; --rate and
// --arrival are checked as given. Every error wraps ErrBadSpec and names the flag.
func TestExplicitRefuses(t *testing.T) {
	t.Parallel()
	if _, err := flagSpec().Explicit(givenOf()); err != nil {
		t.Fatalf("the flags' defaults: %v", err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*Spec)
		given []string
		want  string
	}{
		{"zero concurrency", func(s *Spec) { s.Config.Concurrency = 0 }, nil, "--concurrency 0 must be at least 1"},
		{"zero keys", func(s *Spec) { s.Config.Keys = 0 }, nil, "--keys 0 must be at least 1"},
		{"negative keys", func(s *Spec) { s.Config.Keys = -3 }, nil, "--keys -3"},
		{"zero duration", func(s *Spec) { s.Config.Duration = 0 }, nil, "--duration 0s must be positive"},
		{"zero rate", func(s *Spec) { s.Config.Rate = 0 }, []string{"rate"}, "--rate 0: want a positive rate"},
		{"negative rate", func(s *Spec) { s.Config.Rate = -100 }, []string{"rate"}, "--rate -100: want a positive rate"},
		{"NaN rate", func(s *Spec) { s.Config.Rate = math.NaN() }, []string{"rate"}, "--rate NaN"},
		{"rate too high", func(s *Spec) { s.Config.Rate = 1e9 }, []string{"rate"}, "at most 10000000"},
		{"unknown arrival", func(s *Spec) { s.Config.Rate, s.Config.Arrival = 100, "bursty" }, []string{"rate"}, `--arrival "bursty": want uniform or poisson`},
		{"poisson without rate", func(s *Spec) { s.Config.Arrival = "poisson" }, nil, "--arrival poisson needs --rate"},
		{"uniform without rate", func(s *Spec) { s.Config.Arrival = "uniform" }, nil, "--arrival uniform needs --rate"},
		{"read ratio above 1", func(s *Spec) { s.Config.ReadRatio = 1.5 }, nil, "--read-ratio 1.5: want 0 to 1"},
		{"negative read ratio", func(s *Spec) { s.Config.ReadRatio = -0.1 }, nil, "--read-ratio -0.1: want 0 to 1"},
		{"NaN read ratio", func(s *Spec) { s.Config.ReadRatio = math.NaN() }, nil, "--read-ratio NaN: want 0 to 1"},
		{"zero fanout", func(s *Spec) { s.Config.Fanout = 0 }, []string{"fanout"}, "--fanout 0: want 1 to 1000"},
		{"fanout over keys", func(s *Spec) { s.Config.Keys, s.Config.Fanout = 4, 5 }, []string{"fanout"}, "--fanout 5: want 1 to 4"},
		{"fanout over the most", func(s *Spec) { s.Config.Fanout = 1001 }, []string{"fanout"}, "at most 1000"},
		{"zero repeat", func(s *Spec) { s.Repeat = 0 }, nil, "--repeat 0"},
		{"negative repeat", func(s *Spec) { s.Repeat = -2 }, nil, "--repeat -2"},
		{"blank prefix", func(s *Spec) { s.Config.KeyPrefix = " " }, nil, "--key-prefix must not be empty"},
		{"zero depth", func(s *Spec) { s.Config.Depth = 0 }, nil, "--depth 0: want 1 to"},
	} {
		s := flagSpec()
		tc.edit(&s)
		_, err := s.Explicit(givenOf(tc.given...))
		if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrBadSpec, %q", tc.name, err, tc.want)
		}
	}
}

// What a command line says "none" with becomes what Spec says it with (-1), a fanout left out
// becomes the default (0: the workload's, or --keys if fewer), and the result passes Validate.
func TestExplicitNone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		edit      func(*Spec)
		given     []string
		warmup    time.Duration
		readRatio float64
		fanout    int
	}{
		{"defaults", func(*Spec) {}, nil, workloads.DefaultWarmup, workloads.DefaultReadRatio, 0},
		{"no warm-up", func(s *Spec) { s.Config.Warmup = 0 }, []string{"warmup"}, -1, workloads.DefaultReadRatio, 0},
		{"writes only", func(s *Spec) { s.Config.ReadRatio = 0 }, []string{"read-ratio"}, workloads.DefaultWarmup, -1, 0},
		{"fanout given", func(s *Spec) { s.Config.Fanout = 7 }, []string{"fanout"}, workloads.DefaultWarmup, workloads.DefaultReadRatio, 7},
		{"fanout left out, few keys", func(s *Spec) { s.Config.Keys = 2 }, nil, workloads.DefaultWarmup, workloads.DefaultReadRatio, 0},
	} {
		s := flagSpec()
		tc.edit(&s)
		got, err := s.Explicit(givenOf(tc.given...))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if c := got.Config; c.Warmup != tc.warmup || c.ReadRatio != tc.readRatio || c.Fanout != tc.fanout {
			t.Errorf("%s: warm-up %v, read ratio %v, fanout %d; want %v, %v, %d", tc.name, c.Warmup, c.ReadRatio, c.Fanout, tc.warmup, tc.readRatio, tc.fanout)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s: Validate refuses what Explicit returns: %v", tc.name, err)
		}
	}
}
