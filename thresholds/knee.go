package thresholds

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// The sweep metrics a knee gate names. They are not run metrics (results.Metrics): a sweep has
// them per driver, not per run.
var (
	// MetricKnee is a driver's knee: the highest load a sweep judged within its SLO
	// (results.SweepDriver.KneeLoad), in the sweep's unit (acquisitions/s, or workers in a
	// concurrency sweep). A driver with no step within the SLO has no knee: the gate fails.
	MetricKnee = results.Metric{Name: "knee", Label: "knee", HigherIsBetter: true, Count: true} // Count: printed as a plain number
	// MetricCapacity is the server-bound capacity projected at the knee
	// (results.KneeBracket.ProjectedServerCapacityPerS), in acquisitions/s.
	MetricCapacity = results.Metric{Name: "capacity", Label: "projected capacity", Unit: "acq/s", HigherIsBetter: true}
)

// ParseKnee parses a threshold on a sweep's result, the capacity gate:
//
//	[DRIVER[/BASE] ]knee|capacity OP VALUE
//
// e.g. "lockcore knee>=10000", "capacity>=50000", "lockcore/naive knee>=2". VALUE is a plain
// number (a rate in acquisitions/s, or workers in a concurrency sweep), or a ratio ("2" or "2x")
// with DRIVER/BASE. Errors wrap ErrBadThreshold. It is safe for concurrent use.
func ParseKnee(expr string) (Threshold, error) {
	t, metric, value, err := split(expr, "e.g. 'lockcore knee>=10000' or 'capacity>=50000'")
	if err != nil {
		return Threshold{}, err
	}
	bad := func(format string, a ...any) (Threshold, error) {
		return Threshold{}, fmt.Errorf("%w %q: %s", ErrBadThreshold, t.Expr, fmt.Sprintf(format, a...))
	}
	switch metric {
	case MetricKnee.Name:
		t.Metric = MetricKnee
	case MetricCapacity.Name:
		t.Metric = MetricCapacity
	default:
		return bad("a sweep is gated on knee or capacity, not %q (run's metrics such as p99 are the SLO's: --slo)", metric)
	}
	if value == "" {
		return bad("no value after %s", t.Op)
	}
	if t.IsRatio() {
		value = strings.TrimSuffix(value, "x")
	}
	if t.Limit, err = parseNumber(value); err != nil {
		return bad("%v", err)
	}
	return t, nil
}

// CheckSweep evaluates knee thresholds (ParseKnee) on a sweep's result: one outcome per driver
// the threshold names (every driver of the sweep without one). A driver without a knee (no step
// within the SLO) or without a projection fails, with a note: a gate that cannot see the figure
// does not pass. It is safe for concurrent use.
func CheckSweep(ths []Threshold, sw *results.Sweep) []Result {
	out := make([]Result, len(ths))
	for i, t := range ths {
		out[i] = Result{Threshold: t}
		for _, d := range sw.Drivers {
			if t.Driver != "" && d.Driver != t.Driver {
				continue
			}
			subject := d.Driver
			v, note := sweepValue(t.Metric, &d)
			if t.IsRatio() {
				subject += "/" + t.Base
				b := sweepDriver(sw, t.Base)
				if b == nil {
					out[i].Outcomes = append(out[i].Outcomes, Outcome{Subject: subject, Note: t.Base + " is not in the sweep"})
					continue
				}
				bv, bnote := sweepValue(t.Metric, b)
				switch {
				case note != "":
				case bnote != "":
					note = t.Base + ": " + bnote
				default:
					v /= bv
				}
			}
			o := Outcome{Subject: subject, Note: note}
			if note == "" {
				o.Value, o.Pass = v, t.Op.holds(v, t.Limit)
			}
			out[i].Outcomes = append(out[i].Outcomes, o)
		}
	}
	return out
}

// sweepValue is d's knee or projected capacity, or a note saying why there is none.
func sweepValue(m results.Metric, d *results.SweepDriver) (float64, string) {
	if d.KneeLoad <= 0 {
		return 0, "no knee: no step was within the SLO"
	}
	if m.Name == MetricKnee.Name {
		return d.KneeLoad, ""
	}
	if d.Knee == nil || d.Knee.ProjectedServerCapacityPerS <= 0 {
		return 0, "no projected capacity at the knee (the server's CPU was not measured)"
	}
	return d.Knee.ProjectedServerCapacityPerS, ""
}

func sweepDriver(sw *results.Sweep, name string) *results.SweepDriver {
	for i := range sw.Drivers {
		if sw.Drivers[i].Driver == name {
			return &sw.Drivers[i]
		}
	}
	return nil
}
