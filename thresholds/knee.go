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
	t := Threshold{Expr: strings.TrimSpace(expr)}
	bad := func(format string, a ...any) (Threshold, error) {
		return Threshold{}, fmt.Errorf("%w %q: %s", ErrBadThreshold, t.Expr, fmt.Sprintf(format, a...))
	}
	i := strings.IndexAny(t.Expr, "<>=!")
	if i < 0 {
		return bad("no operator: want e.g. 'lockcore knee>=10000' or 'capacity>=50000'")
	}
	left, rest := strings.TrimSpace(t.Expr[:i]), t.Expr[i:]
	for _, op := range []Op{LessEqual, GreaterEqual, Equal, NotEqual, Less, Greater} {
		if strings.HasPrefix(rest, string(op)) {
			t.Op = op
			break
		}
	}
	if t.Op == "" {
		return bad("unknown operator: want <, <=, >, >=, == or !=")
	}
	fields := strings.Fields(left)
	switch len(fields) {
	case 1:
	case 2:
		driver, base, isRatio := strings.Cut(fields[0], "/")
		if driver == "" || (isRatio && (base == "" || strings.Contains(base, "/"))) {
			return bad("%q: want DRIVER or DRIVER/BASE before the metric", fields[0])
		}
		if isRatio && driver == base {
			return bad("a ratio of %s to itself is always 1", driver)
		}
		t.Driver, t.Base = driver, base
	default:
		return bad("want [DRIVER[/BASE] ]knee|capacity OP VALUE, e.g. 'lockcore knee>=10000'")
	}
	switch fields[len(fields)-1] {
	case MetricKnee.Name:
		t.Metric = MetricKnee
	case MetricCapacity.Name:
		t.Metric = MetricCapacity
	default:
		return bad("a sweep is gated on knee or capacity, not %q (run's metrics such as p99 are the SLO's: --slo)", fields[len(fields)-1])
	}
	value := strings.TrimSpace(rest[len(t.Op):])
	if value == "" {
		return bad("no value after %s", t.Op)
	}
	var err error
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
