// Package thresholds checks pass/fail conditions on the runs of one lockbench
// invocation, k6-style: `p99<5ms`, `throughput>20000`, `violations==0`, and,
// more robust on a shared CI machine, ratios between two drivers measured side
// by side in the same invocation: `lockcore/naive throughput>=1.5`. A
// machine that is twice as loaded slows both drivers of a round, so their
// ratio holds where an absolute figure would not.
//
// Over repeated rounds (--repeat) a threshold looks at the median of the
// rounds (counts such as errors and violations: their total), and a ratio at
// the median of the per-round ratios, since drivers of one round ran back to
// back and share that round's conditions.
package thresholds

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
)

// ErrBadThreshold is wrapped by every error Parse returns. Check it with errors.Is.
var ErrBadThreshold = errors.New("bad threshold")

// Op is a comparison operator.
type Op string

// The operators a threshold may use.
const (
	Less         Op = "<"
	LessEqual    Op = "<="
	Greater      Op = ">"
	GreaterEqual Op = ">="
	Equal        Op = "=="
	NotEqual     Op = "!="
)

// holds reports whether "v op limit" is true.
func (op Op) holds(v, limit float64) bool {
	switch op {
	case Less:
		return v < limit
	case LessEqual:
		return v <= limit
	case Greater:
		return v > limit
	case GreaterEqual:
		return v >= limit
	case Equal:
		return v == limit
	case NotEqual:
		return v != limit
	}
	return false
}

// Threshold is one parsed condition. It is a plain value and safe for
// concurrent use.
type Threshold struct {
	// Expr is the text it was parsed from.
	Expr string
	// Driver limits the threshold to one driver's runs; empty means every driver.
	Driver string
	// Base, when set, makes it a ratio: Driver's metric over Base's, on the same case.
	Base   string
	Metric results.Metric
	Op     Op
	// Limit is in the metric's unit (microseconds for latencies), or a plain ratio.
	Limit float64
}

// IsRatio reports whether t compares two drivers.
func (t *Threshold) IsRatio() bool { return t.Base != "" }

// Drivers returns the drivers t names, for checking them against the ones that ran.
func (t *Threshold) Drivers() []string {
	var out []string
	for _, d := range []string{t.Driver, t.Base} {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// Parse parses one threshold:
//
//	[DRIVER[/BASE] ]METRIC OP VALUE
//
// METRIC is one of results.Metrics (throughput, p50, p99, p999, errors,
// violations, cmds, …); OP is <, <=, >, >=, == or !=. Without DRIVER the
// threshold applies to every driver; with DRIVER/BASE it is the ratio of
// DRIVER's metric to BASE's and VALUE is a plain number ("1.5" or "1.5x").
// Absolute latencies and CPU times per acquisition need a unit ("5ms",
// "800us", "800µs"); other values are plain numbers. Errors wrap ErrBadThreshold and say what was expected. It is
// safe for concurrent use.
func Parse(expr string) (Threshold, error) {
	t, metric, value, err := split(expr, "e.g. 'p99<5ms', 'throughput>20000' or 'lockcore/naive throughput>=1.5'")
	if err != nil {
		return Threshold{}, err
	}
	bad := func(format string, a ...any) (Threshold, error) {
		return Threshold{}, fmt.Errorf("%w %q: %s", ErrBadThreshold, t.Expr, fmt.Sprintf(format, a...))
	}
	if metric == "" {
		return bad("no metric before %s (known: %s)", t.Op, results.MetricNames())
	}
	m, ok := results.LookupMetric(metric)
	if !ok {
		return bad("unknown metric %q (known: %s)", metric, results.MetricNames())
	}
	t.Metric = m
	if value == "" {
		return bad("no value after %s", t.Op)
	}
	switch {
	case t.IsRatio():
		t.Limit, err = parseNumber(strings.TrimSuffix(value, "x"))
	case m.Latency, m.Unit == "µs/acq":
		t.Limit, err = parseLatency(value)
	default:
		t.Limit, err = parseNumber(value)
	}
	if err != nil {
		return bad("%v", err)
	}
	return t, nil
}

func parseNumber(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

// parseLatency reads a duration with its unit, in microseconds. A bare number is refused:
// whether "5" means 5µs or 5ms is a guess that would silently gate on the wrong figure.
func parseLatency(s string) (float64, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return 0, fmt.Errorf("%q: a latency needs its unit, e.g. 5ms or 800us", s)
		}
		return 0, fmt.Errorf("%q is not a duration such as 5ms or 800us", s)
	}
	return float64(d) / float64(time.Microsecond), nil
}

// String renders t as it was given.
func (t Threshold) String() string { return t.Expr }

// split reads the grammar Parse and ParseKnee share, [DRIVER[/BASE] ]METRIC OP VALUE: the
// threshold's Expr, Driver, Base and Op, the metric's name ("" when none was written) and the
// value's text. example ends the message for a missing operator. Errors wrap ErrBadThreshold.
func split(expr, example string) (t Threshold, metric, value string, err error) {
	t = Threshold{Expr: strings.TrimSpace(expr)}
	bad := func(format string, a ...any) (Threshold, string, string, error) {
		return Threshold{}, "", "", fmt.Errorf("%w %q: %s", ErrBadThreshold, t.Expr, fmt.Sprintf(format, a...))
	}
	i := strings.IndexAny(t.Expr, "<>=!")
	if i < 0 {
		return bad("no operator: want %s", example)
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
	value = strings.TrimSpace(rest[len(t.Op):])
	fields := strings.Fields(left)
	switch len(fields) {
	case 0:
		return t, "", value, nil
	case 1:
	case 2:
		subject := fields[0]
		driver, base, isRatio := strings.Cut(subject, "/")
		if driver == "" || (isRatio && (base == "" || strings.Contains(base, "/"))) {
			return bad("%q: want DRIVER or DRIVER/BASE before the metric", subject)
		}
		if isRatio && driver == base {
			return bad("a ratio of %s to itself is always 1", driver)
		}
		t.Driver, t.Base = driver, base
	default:
		return bad("want [DRIVER[/BASE] ]METRIC OP VALUE, %s", example)
	}
	return t, fields[len(fields)-1], value, nil
}

// Outcome is a threshold checked on one driver (or pair of drivers) on one
// case. It is a plain value and safe for concurrent use.
type Outcome struct {
	// Subject names what was checked: "lockcore contention/single/…" or "lockcore/naive …".
	Subject string
	// Value is the figure compared with the limit; for ratios the median of the per-round
	// ratios (or the ratio of the medians when the rounds do not pair up).
	Value float64
	// Pass is whether the threshold held; false too when it could not be evaluated.
	Pass bool
	// Note explains an outcome that could not be evaluated, or how a ratio was taken.
	Note string
}

// Result is one threshold checked over a whole invocation. It is a plain
// value and safe for concurrent use.
type Result struct {
	Threshold Threshold
	Outcomes  []Outcome
}

// Pass reports whether the threshold held everywhere it applied, and applied somewhere: a
// threshold that matched no run fails, because a gate that checks nothing is no gate.
func (r *Result) Pass() bool {
	if len(r.Outcomes) == 0 {
		return false
	}
	for _, o := range r.Outcomes {
		if !o.Pass {
			return false
		}
	}
	return true
}

// Check evaluates every threshold on runs. It is safe for concurrent use.
func Check(ths []Threshold, runs []results.Run) []Result {
	groups := results.GroupRuns(runs)
	cases := make(map[string]bool)
	for i := range groups {
		cases[groups[i].Case().String()] = true
	}
	// One invocation usually runs one case: then the driver alone names an outcome.
	subject := func(who string, g *results.Group) string {
		if len(cases) == 1 {
			return who
		}
		return who + " (" + caseName(g.Case()) + ")"
	}
	out := make([]Result, len(ths))
	for i, t := range ths {
		out[i] = Result{Threshold: t}
		if t.IsRatio() {
			out[i].Outcomes = checkRatio(t, groups, subject)
		} else {
			out[i].Outcomes = checkAbsolute(t, groups, subject)
		}
	}
	return out
}

func checkAbsolute(t Threshold, groups []results.Group, subject func(string, *results.Group) string) []Outcome {
	var out []Outcome
	for i := range groups {
		g := &groups[i]
		if t.Driver != "" && g.Driver() != t.Driver {
			continue
		}
		o := Outcome{Subject: subject(g.Driver(), g)}
		v, ok := g.Value(t.Metric)
		if !ok {
			o.Note = "not measured"
		} else {
			o.Value, o.Pass = v, t.Op.holds(v, t.Limit)
		}
		out = append(out, o)
	}
	return out
}

func checkRatio(t Threshold, groups []results.Group, subject func(string, *results.Group) string) []Outcome {
	var out []Outcome
	for i := range groups {
		g := &groups[i]
		if g.Driver() != t.Driver {
			continue
		}
		o := Outcome{Subject: subject(t.Driver+"/"+t.Base, g)}
		var b *results.Group
		for j := range groups {
			if groups[j].Driver() == t.Base && groups[j].Case().String() == g.Case().String() {
				b = &groups[j]
			}
		}
		if b == nil {
			o.Note = t.Base + " did not run this case"
			out = append(out, o)
			continue
		}
		v, note, ok := ratio(t.Metric, g, b)
		o.Note = note
		if ok {
			o.Value, o.Pass = v, t.Op.holds(v, t.Limit)
		}
		out = append(out, o)
	}
	return out
}

// ratio is g's metric over b's: the median of per-round ratios when the rounds pair up (both
// drivers measured in the same round), else the ratio of the groups' aggregates.
func ratio(m results.Metric, g, b *results.Group) (float64, string, bool) {
	base := make(map[int]float64)
	for i := range b.Runs {
		if v, ok := m.Value(&b.Runs[i]); ok && b.Runs[i].Round > 0 && v != 0 {
			base[b.Runs[i].Round] = v
		}
	}
	var per []float64
	for i := range g.Runs {
		r := &g.Runs[i]
		bv, ok := base[r.Round]
		if v, vok := m.Value(r); ok && vok && r.Round > 0 {
			per = append(per, v/bv)
		}
	}
	if len(per) > 0 && !m.Count {
		note := ""
		if len(per) > 1 {
			note = fmt.Sprintf("median of %d per-round ratios", len(per))
		}
		return results.Median(per), note, true
	}
	gv, gok := g.Value(m)
	bv, bok := b.Value(m)
	switch {
	case !gok || !bok:
		return 0, "not measured", false
	case bv == 0:
		return 0, fmt.Sprintf("%s's %s is 0: no ratio", b.Driver(), m.Name), false
	}
	return gv / bv, "", true
}

// caseName is the case's values, e.g. "contention/single/concurrency=64/keys=100/…".
func caseName(c results.Case) string {
	vals := make([]string, len(c))
	for i, l := range c {
		switch l.Name {
		case "workload", "topology":
			vals[i] = l.Value
		default:
			vals[i] = l.Name + "=" + l.Value
		}
	}
	return strings.Join(vals, "/")
}

// liveMetrics are the metrics a running phase can answer (workloads.Live): the acquire
// latencies, throughput, cycle p99 and the counts that only grow (errors, violations), whose
// failure during the run is final.
var liveMetrics = map[string]bool{
	"throughput": true, "p50": true, "p90": true, "p99": true, "p999": true, "max": true, "mean": true,
	"cycle-p99": true, "errors": true, "violations": true, "fencing-violations": true,
}

// CanAbort reports whether t can be checked while a run measures, to stop it early: an
// absolute threshold on a metric the running phase measures. A ratio cannot (its two drivers
// run one after the other), nor can commands, CPU or driver counts, read when a run ends, nor
// a lower bound on acquisitions, which grow until the end. It is safe for concurrent use.
func (t *Threshold) CanAbort() bool {
	return !t.IsRatio() && liveMetrics[t.Metric.Name]
}

// Live checks the thresholds that CanAbort and apply to driver on run, the measured phase so
// far, and returns the first that fails, with the value it read ("p99<5ms: p99 7.21ms after
// 2.0s"), or "" when none does. A metric the phase has not measured yet (no acquisition)
// fails nothing. It is safe for concurrent use.
func Live(ths []Threshold, driver string, run *results.Run) string {
	for _, t := range ths {
		if !t.CanAbort() || (t.Driver != "" && t.Driver != driver) {
			continue
		}
		v, ok := t.Metric.Value(run)
		if ok && !t.Op.holds(v, t.Limit) {
			return fmt.Sprintf("%s failed: %s %s after %.1fs", t.Expr, t.Metric.Name, t.Metric.Format(v), run.DurationS)
		}
	}
	return ""
}
