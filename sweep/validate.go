package sweep

// MaxWorkers bounds a concurrency step, so a typo cannot start a million goroutines.
const MaxWorkers = 100000

// Validate reports whether o, taken as written, is a sweep Run can run, its Step and Progress
// functions aside (the caller may set them later): the first option out of its range is named
// in an error wrapping ErrBadInput, as lockbench's flags name it. A zero value is refused where
// its range excludes 0: Run fills the defaults of zero values (see Options) before it
// validates, a caller that validates first gives every option. It is safe for concurrent use.
func (o *Options) Validate() error {
	switch {
	case len(o.Drivers) == 0:
		return badInput("no drivers")
	case !(o.SLO.Percentile > 0 && o.SLO.Percentile < 100) || o.SLO.Limit <= 0:
		return badInput("SLO %v: want a percentile in (0, 100) and a positive limit", o.SLO)
	case !(o.SaturationMargin > 0 && o.SaturationMargin < 1):
		return badInput("--saturation-margin %v: want above 0 and below 1 (0.05 is 5%%)", o.SaturationMargin)
	case !(o.StopFactor >= 1) || o.StopFactor > 1e6: // +Inf and NaN too
		return badInput("--stop-factor %v: want 1 or more", o.StopFactor)
	case o.Rounds < 1 || o.Rounds > MaxRoundsLimit:
		return badInput("--rounds %d: want 1 to %d", o.Rounds, MaxRoundsLimit)
	case o.MaxRounds < o.Rounds || o.MaxRounds > MaxRoundsLimit:
		return badInput("--max-rounds %d: want from --rounds (%d) to %d", o.MaxRounds, o.Rounds, MaxRoundsLimit)
	case !(o.Confidence > 0 && o.Confidence < 1):
		return badInput("confidence %v: want above 0 and below 1", o.Confidence)
	case !(o.Precision >= 0 && o.Precision <= 1):
		return badInput("--precision %v: want 0 (no refinement) or a fraction up to 1, e.g. 0.05 for 5%%", o.Precision)
	case o.Precision > 0 && o.Precision < 0.001:
		return badInput("--precision %v: below 0.1%% no two loads would be told apart by a run; want at least 0.001", o.Precision)
	case o.Budget < 0:
		return badInput("--budget %v: want 0 (no bound) or a positive duration, e.g. 10m", o.Budget)
	case !(o.FloorShare >= 0 && o.FloorShare < 1):
		return badInput("--noise-floor %v: want 0 (skip) or a fraction below 1, e.g. 0.05", o.FloorShare)
	}
	return CheckLoads(o.Mode, o.Loads)
}
