package bench

import (
	"strings"

	"github.com/lockbench/lockbench/pacing"
	"github.com/lockbench/lockbench/workloads"
)

// Explicit checks s as a command line gives it, and returns it in the form Validate takes. On
// a command line a zero is what the user typed, a mistake or "none", where in a Spec it is the
// default: given says which lockbench run flags were set (pflag.FlagSet.Changed). A zero
// --concurrency, --keys, --duration, --repeat or --depth is refused; --warmup 0s and
// --read-ratio 0 become -1 (no warm-up, writes only); --fanout left out becomes 0 (the
// default, or --keys if fewer). The checks run in lockbench run's order, each error wrapping
// ErrBadSpec; the domain's checks are Validate's, after.
func (s Spec) Explicit(given func(flag string) bool) (Spec, error) {
	cfg := &s.Config
	if cfg.Concurrency < 1 {
		return s, bad("--concurrency %d must be at least 1", cfg.Concurrency)
	}
	if cfg.Keys < 1 {
		return s, bad("--keys %d must be at least 1", cfg.Keys)
	}
	if cfg.Duration <= 0 {
		return s, bad("--duration %v must be positive", cfg.Duration)
	}
	if err := checkPacing(given("rate"), cfg.Rate, cfg.Arrival); err != nil {
		return s, err
	}
	if !given("warmup") && cfg.Warmup == 0 {
		cfg.Warmup = workloads.DefaultWarmup
	} else if cfg.Warmup == 0 {
		cfg.Warmup = -1 // explicit --warmup 0s: no warm-up
	}
	if !(cfg.ReadRatio >= 0 && cfg.ReadRatio <= 1) { // NaN too
		return s, bad("--read-ratio %v: want 0 to 1", cfg.ReadRatio)
	}
	if cfg.ReadRatio == 0 {
		cfg.ReadRatio = -1 // explicit --read-ratio 0: writes only; 0 in workloads.Config is the default
	}
	if given("fanout") {
		if cfg.Fanout < 1 || cfg.Fanout > min(cfg.Keys, workloads.MaxFanout) {
			return s, bad("--fanout %d: want 1 to %d (--keys %d, at most %d)", cfg.Fanout, min(cfg.Keys, workloads.MaxFanout), cfg.Keys, workloads.MaxFanout)
		}
	} else {
		cfg.Fanout = 0 // the default, or --keys if fewer
	}
	if s.Repeat < 1 || s.Repeat > MaxRepeat {
		return s, bad("--repeat %d: want 1 to %d", s.Repeat, MaxRepeat)
	}
	if strings.TrimSpace(cfg.KeyPrefix) == "" {
		return s, bad("--key-prefix must not be empty: it keeps lockbench's keys apart from yours")
	}
	if cfg.Depth < 1 || cfg.Depth > workloads.MaxDepth {
		return s, bad("--depth %d: want 1 to %d", cfg.Depth, workloads.MaxDepth)
	}
	return s, nil
}

// checkPacing checks --rate (given says whether it was) and --arrival. Every workload paces:
// none is refused --rate.
func checkPacing(given bool, rate float64, arrival string) error {
	switch {
	case !given && arrival != "":
		return bad("--arrival %s needs --rate: arrivals pace the open loop", arrival)
	case !given:
		return nil
	case !(rate > 0): // NaN too
		return bad("--rate %v: want a positive rate in acquisitions/s (leave --rate out for a closed loop)", rate)
	}
	if err := pacing.Check(rate, arrival); err != nil {
		return bad("--%s", strings.TrimPrefix(err.Error(), pacing.ErrBadSchedule.Error()+": "))
	}
	return nil
}
