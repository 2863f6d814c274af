package sweep

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/spf13/pflag"
)

// sweepFlagSet is a flag set with run's flags a sweep touches, and the sweep's own.
func sweepFlagSet(t *testing.T, s *Flags, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	fs.Int("repeat", 1, "")
	fs.String("baseline", "", "")
	fs.Float64("rate", 0, "")
	fs.Int("concurrency", 64, "")
	arrival := "run's"
	fs.StringVar(&arrival, "arrival", "run's", "run's help")
	s.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	if arrival != "run's" {
		t.Errorf("%q: --arrival reached run's variable (%q): the sweep holds it back", args, arrival)
	}
	return fs
}

// TestFlagsCheck: the sweep's flags and run's flags that do not apply to a sweep; each
// complaint names the flag and wraps ErrBadInput without its text.
func TestFlagsCheck(t *testing.T) {
	t.Parallel()
	run := RunSettings{Drivers: []string{"lockcore", "naive"}, Warmup: time.Second, Duration: 3 * time.Second}
	for _, tc := range []struct {
		args []string
		ths  []string
		want string // "" for none
	}{
		{nil, nil, ""},
		{[]string{"--rates", "1000,2000", "--arrival", "poisson"}, nil, ""},
		{nil, []string{"lockcore knee>=1000", "lockcore/naive knee>=2"}, ""},
		{nil, []string{"lockcore p99<5ms"}, "--threshold: "},
		{nil, []string{"redsync knee>=1000"}, `--threshold "redsync knee>=1000": redsync is not among the swept drivers (lockcore,naive)`},
		{[]string{"--repeat", "3"}, nil, "--repeat is for lockbench run"},
		{[]string{"--baseline", "naive"}, nil, "--baseline is for lockbench run's ratios"},
		{[]string{"--rate", "1000"}, nil, "--rate is one run's rate"},
		{[]string{"--concurrency-steps", "1,2", "--rates", "1000"}, nil, "--concurrency-steps (closed loop) and rate steps (open loop) exclude each other"},
		{[]string{"--slo", "p99"}, nil, "--slo: "},
		{[]string{"--noise-floor", "0.1"}, nil, "--noise-floor is for rate sweeps"},
		{[]string{"--rounds", "0"}, nil, "round"},
	} {
		var s Flags
		fs := sweepFlagSet(t, &s, tc.args...)
		r := run
		r.Thresholds = tc.ths
		err := s.Check(fs, r)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q %q: %v", tc.args, tc.ths, err)
		case tc.want != "" && (!errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), ErrBadInput.Error())):
			t.Errorf("%q %q: error %v, want ErrBadInput containing %q, without its text", tc.args, tc.ths, err, tc.want)
		}
	}
}

// TestFlagsOptions: the options every flag gives, none left to Run's defaults; --max-rounds
// is at least --rounds unless given, and --arrival reaches the sweep, not run.
func TestFlagsOptions(t *testing.T) {
	t.Parallel()
	run := RunSettings{Drivers: []string{"lockcore"}, Thresholds: []string{"lockcore knee>=1000"}, Warmup: time.Second, Duration: 3 * time.Second}
	var s Flags
	fs := sweepFlagSet(t, &s, "--rate-from", "1000", "--rate-to", "8000", "--steps", "4", "--rounds", "5", "--arrival", "poisson", "--slo", "p999=10ms")
	if err := s.Check(fs, run); err != nil {
		t.Fatal(err)
	}
	o := s.Options(run)
	if o.Mode != results.SweepRate || len(o.Loads) != 4 || o.Rounds != 5 || o.MaxRounds != max(DefaultMaxRounds, 5) || o.Duration != run.Duration ||
		o.StepTime != StepTime(run.Warmup, run.Duration) || o.Confidence != DefaultConfidence || o.ProjectCapacity == nil {
		t.Errorf("options: %+v", o)
	}
	if s.Arrival != "poisson" || len(s.Gates) != 1 || s.DryRun {
		t.Errorf("arrival %q, gates %d, dry run %v", s.Arrival, len(s.Gates), s.DryRun)
	}
	s = Flags{}
	fs = sweepFlagSet(t, &s, "--rounds", "1", "--dry-run")
	if err := s.Check(fs, run); err != nil {
		t.Fatal(err)
	}
	if o := s.Options(run); o.Mode != results.SweepConcurrency || o.MaxRounds != 1 || len(o.Loads) != len(DefaultConcurrencySteps) || !s.DryRun {
		t.Errorf("--rounds 1: %+v (dry run %v)", o, s.DryRun)
	}
	for _, name := range []string{"repeat", "baseline", "rate"} {
		if !fs.Lookup(name).Hidden {
			t.Errorf("--%s is listed in sweep's help", name)
		}
	}
}
