package sweep

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// Validate names the first option out of its range, as lockbench's flags do; zero values are
// refused where their range excludes 0, and Run fills them with defaults first.
func TestValidate(t *testing.T) {
	t.Parallel()
	slo := mustSLO(t, "p99=5ms")
	ok := Options{Mode: results.SweepRate, Loads: []float64{100, 200}, Drivers: []string{"a"}, SLO: slo,
		SaturationMargin: DefaultSaturationMargin, StopFactor: DefaultStopFactor, Rounds: 3, MaxRounds: 6,
		Confidence: DefaultConfidence, Precision: DefaultPrecision, Budget: DefaultBudget, FloorShare: DefaultFloorShare}
	if err := ok.Validate(); err != nil {
		t.Fatalf("lockbench sweep's defaults: %v", err)
	}
	for _, c := range []struct {
		msg  string
		edit func(*Options)
	}{
		{"no drivers", func(o *Options) { o.Drivers = nil }},
		{"--saturation-margin 0: want above 0 and below 1 (0.05 is 5%)", func(o *Options) { o.SaturationMargin = 0 }},
		{"--saturation-margin 1:", func(o *Options) { o.SaturationMargin = 1 }},
		{"--stop-factor 0.5: want 1 or more", func(o *Options) { o.StopFactor = 0.5 }},
		{"--stop-factor +Inf", func(o *Options) { o.StopFactor = math.Inf(1) }},
		{"--rounds 0: want 1 to 20", func(o *Options) { o.Rounds = 0 }},
		{"--max-rounds 2: want from --rounds (3) to 20", func(o *Options) { o.MaxRounds = 2 }},
		{"--max-rounds 21", func(o *Options) { o.MaxRounds = 21 }},
		{"confidence 0", func(o *Options) { o.Confidence = 0 }},
		{"--precision -0.1: want 0 (no refinement) or a fraction up to 1", func(o *Options) { o.Precision = -0.1 }},
		{"--precision 2:", func(o *Options) { o.Precision = 2 }},
		{"--precision 0.0001: below 0.1% no two loads would be told apart by a run; want at least 0.001", func(o *Options) { o.Precision = 0.0001 }},
		{"--budget -1m0s: want 0 (no bound)", func(o *Options) { o.Budget = -time.Minute }},
		{"--noise-floor 1: want 0 (skip) or a fraction below 1", func(o *Options) { o.FloorShare = 1 }},
		{"--rates: step 2 (100) is not above step 1 (200)", func(o *Options) { o.Loads = []float64{200, 100} }},
		{"--concurrency-steps: 200000 workers: at most 100000", func(o *Options) {
			o.Mode, o.Loads = results.SweepConcurrency, []float64{1, 200000}
		}},
	} {
		o := ok
		c.edit(&o)
		if err := o.Validate(); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v; want ErrBadInput with %q", c.msg, err, c.msg)
		}
	}
	// What Validate refuses as written, Run takes as "the default".
	step := func(context.Context, Step) (results.Run, error) { return results.Run{}, nil }
	zero := Options{Mode: results.SweepRate, Loads: []float64{100}, Drivers: []string{"a"}, SLO: slo, Step: step}
	if err := zero.Validate(); err == nil {
		t.Error("Validate takes a zero saturation margin; want it refused as written")
	}
	if err := zero.fill(); err != nil {
		t.Errorf("Run's defaults for zero values: %v", err)
	}
}
