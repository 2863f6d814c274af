package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// DefaultAlpha is the significance level of the tests when Options.Alpha is 0.
const DefaultAlpha = 0.05

// DefaultMetrics are the metrics Compare looks at when Options.Metrics is nil.
var DefaultMetrics = []string{"throughput", "p50", "p99", "p999", "cmds", "client-cpu", "redis-cpu", "errors", "violations"}

// DefaultMaxRegression is the largest change for the worse each metric may
// show before it counts as a regression, as a fraction (0.05 is 5%), when
// Options.MaxRegression does not say. Tails are noisier than medians on a
// shared machine, so p999 gets more room than p50; errors get none: any
// significant increase regresses. Violations take no threshold: any
// violation in NEW fails the gate.
var DefaultMaxRegression = map[string]float64{
	"throughput": 0.05,
	"p50":        0.10,
	"p90":        0.10,
	"p99":        0.10,
	"p999":       0.20,
	"max":        0.50,
	"mean":       0.10,
	"cmds":       0.05,
	"client-cpu": 0.10,
	"redis-cpu":  0.10,
	"errors":     0,
}

// DefaultGate are the metrics whose regressions fail the gate when Options.Gate is nil:
// throughput and the acquire p99, the two a capacity plan rests on. The other metrics are
// compared and reported, not gated: every gated row spends a share of alpha, and seven rows per
// driver left 5 runs a side unable ever to reach significance. Safety violations always fail.
var DefaultGate = []string{"throughput", "p99"}

// fallbackMaxRegression is for metrics DefaultMaxRegression does not name.
const fallbackMaxRegression = 0.10

// Options configures Compare. The zero value uses every default. It is a
// plain value and safe for concurrent use.
type Options struct {
	// Alpha is the significance level of the tests, above 0 and below 1; 0
	// means DefaultAlpha.
	Alpha float64
	// MaxRegression overrides DefaultMaxRegression for the metrics it names
	// (fractions, 0.05 is 5%).
	MaxRegression map[string]float64
	// Strict makes every inconclusive gated row fail the gate, a median worse than the
	// threshold without significance included.
	Strict bool
	// AllowInconclusive lets the gate pass when a gated row has too few runs for the test
	// ever to reach significance. By default that fails the gate (fail closed): a gate that
	// cannot fail is no gate.
	AllowInconclusive bool
	// Gate are the names of the metrics whose regressions fail the gate; nil means
	// DefaultGate. They must be among Metrics. Safety violations always fail.
	Gate []string
	// Metrics are the names of the metrics to compare (see results.Metrics);
	// nil means DefaultMetrics. "violations" is always checked.
	Metrics []string
	// Ignore names case fields (results.CaseLabels: topology, net, concurrency, …) left out of
	// what matches a BASE group with a NEW one, as benchstat's -ignore: with "net", runs with
	// --net latency=1ms compare with runs without. The sides' values of an ignored field are
	// listed in the report's warnings when they differ.
	Ignore []string
}

// threshold returns the largest tolerated change for the worse of metric name.
func (o *Options) threshold(name string) float64 {
	if t, ok := o.MaxRegression[name]; ok {
		return t
	}
	if t, ok := DefaultMaxRegression[name]; ok {
		return t
	}
	return fallbackMaxRegression
}

func (o *Options) validate() error {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return badInput("alpha %v: want above 0 and below 1, e.g. 0.05", o.Alpha)
	}
	if o.Metrics == nil {
		o.Metrics = DefaultMetrics
	}
	for _, name := range o.Metrics {
		if _, ok := results.LookupMetric(name); !ok {
			return badInput("unknown metric %q (known: %s)", name, results.MetricNames())
		}
	}
	if o.Gate == nil {
		o.Gate = DefaultGate
	}
	for _, name := range o.Gate {
		m, ok := results.LookupMetric(name)
		if !ok {
			return badInput("--gate: unknown metric %q (known: %s)", name, results.MetricNames())
		}
		if !slices.Contains(o.Metrics, m.Name) {
			return badInput("--gate %s: not among the metrics compared (%s)", name, strings.Join(o.Metrics, ", "))
		}
	}
	if err := results.CheckCaseLabels(o.Ignore); err != nil {
		return badInput("--ignore: %v", err)
	}
	for name, t := range o.MaxRegression {
		if err := checkThresholdMetric(name); err != nil {
			return err
		}
		if !(t >= 0) || math.IsInf(t, 0) {
			return badInput("max regression of %s: %v is not a fraction ≥ 0", name, t)
		}
	}
	return nil
}

// gated reports whether metric name fails the gate when it regresses.
func (o *Options) gated(name string) bool {
	for _, g := range o.Gate {
		if m, _ := results.LookupMetric(g); m.Name == name {
			return true
		}
	}
	return false
}

func checkThresholdMetric(name string) error {
	m, ok := results.LookupMetric(name)
	switch {
	case !ok:
		return badInput("--max-regression: unknown metric %q (known: %s)", name, results.MetricNames())
	case m.Name == "violations" || m.Name == "fencing-violations":
		return badInput("--max-regression: %s take no threshold: any violation in NEW fails the gate", name)
	}
	return nil
}

// ParseMaxRegression parses "throughput=5%,p99=10%" (also given as several
// strings, as a repeated flag gives them) into fractions by metric name. Each
// value must be a percentage with its % sign, 0% or more, so that "5" cannot
// be misread as 5% or 500%. Errors wrap ErrBadInput. It is safe for
// concurrent use.
func ParseMaxRegression(specs ...string) (map[string]float64, error) {
	out := make(map[string]float64)
	for _, spec := range specs {
		for item := range strings.SplitSeq(spec, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			name, pct, ok := strings.Cut(item, "=")
			name, pct = strings.TrimSpace(name), strings.TrimSpace(pct)
			if !ok || name == "" {
				return nil, badInput("--max-regression %q: want METRIC=PERCENT, e.g. throughput=5%%", item)
			}
			if err := checkThresholdMetric(name); err != nil {
				return nil, err
			}
			m, _ := results.LookupMetric(name)
			f, err := parsePercent(pct)
			if err != nil {
				return nil, badInput("--max-regression %s=%s: %v", name, pct, err)
			}
			out[m.Name] = f
		}
	}
	return out, nil
}

func parsePercent(s string) (float64, error) {
	num, ok := strings.CutSuffix(s, "%")
	if !ok {
		return 0, fmt.Errorf("want a percentage with its %% sign, e.g. 5%%")
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a number", num)
	}
	if f < 0 {
		return 0, fmt.Errorf("a negative percentage makes no sense: it is the largest change for the worse tolerated")
	}
	return f / 100, nil
}

// FormatMaxRegression renders the thresholds of the given metrics as "name=5%"
// pairs, for help text and reports. It is safe for concurrent use.
func FormatMaxRegression(m map[string]float64) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, name+"="+formatPct(m[name]))
	}
	return strings.Join(parts, ",")
}

func formatPct(f float64) string {
	return strconv.FormatFloat(100*f, 'f', -1, 64) + "%"
}
