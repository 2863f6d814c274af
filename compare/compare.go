// Package compare is lockbench's regression gate: it compares the repeated
// runs of two sets of result files (BASE and NEW) case by case and driver by
// driver, and says whether NEW regressed.
//
// The statistics are benchstat's (golang.org/x/perf/benchmath): medians with
// confidence intervals, and the Mann–Whitney U test, which assumes nothing
// about how run-to-run noise is distributed. A row regresses only when NEW is
// worse than BASE by more than the metric's threshold with significance: the
// U test, one-sided ("is NEW worse?"), is run against BASE shifted by the
// threshold, so noise alone, or a real change smaller than the threshold,
// does not fail a build.
//
// Only the gated metrics (throughput and p99 by default) fail the gate; the
// others are compared and reported. Because the gate fails when any gated row
// regresses, alpha is shared out over the gated rows tested (Bonferroni):
// noise alone fails the whole gate at most alpha of the time, not alpha per
// row. The gate fails closed: when a gated row has too few runs for the test
// ever to reach that level, Compare says so and the gate fails, naming the
// runs per side needed, unless Options.AllowInconclusive. A median worse than
// the threshold without significance is "inconclusive", which fails only in
// strict mode. A safety violation in NEW always fails.
package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"github.com/lockbench/lockbench/results"
	"golang.org/x/perf/benchmath"
)

// Verdict is the outcome of one row, and of a whole comparison.
type Verdict string

// The verdicts. A row is one of them; a Report's Verdict is VerdictPass,
// VerdictRegression, VerdictViolations, VerdictTooFewRuns or, in strict mode,
// VerdictInconclusive.
const (
	// VerdictPass: no significant change for the worse beyond the threshold, and enough
	// samples to have seen one (or both samples identical).
	VerdictPass Verdict = "ok"
	// VerdictImproved: significantly better (informational; passes).
	VerdictImproved Verdict = "improved"
	// VerdictRegression: worse by more than the threshold, significantly.
	VerdictRegression Verdict = "regression"
	// VerdictInconclusive: not shown to regress, but a regression beyond the threshold cannot
	// be ruled out: too few samples for the test to ever reach alpha, the median is worse than
	// the threshold without significance, or one side did not measure the metric.
	VerdictInconclusive Verdict = "inconclusive"
	// VerdictViolations: NEW had safety violations; always fails.
	VerdictViolations Verdict = "violations"
	// VerdictTooFewRuns (a Report's only): a gated row had too few runs for its test ever to
	// reach significance, so the gate could not have failed; it fails unless
	// Options.AllowInconclusive.
	VerdictTooFewRuns Verdict = "too-few-runs"
)

// Report is the result of Compare. It is a plain value; it is not safe for
// concurrent modification.
type Report struct {
	// Verdict is the gate's outcome; Failed says whether it fails.
	Verdict Verdict `json:"verdict"`
	// Alpha, Strict, AllowInconclusive and Gate are the options the report was made with.
	Alpha             float64  `json:"alpha"`
	Strict            bool     `json:"strict"`
	AllowInconclusive bool     `json:"allow_inconclusive"`
	Gate              []string `json:"gate"`
	// Ignore are the case fields left out of matching groups (Options.Ignore).
	Ignore []string `json:"ignore,omitempty"`
	// Tested counts the gated rows that needed a test (measured on both sides, not identical,
	// not violations); each row was tested at RowAlpha = Alpha / Tested.
	Tested   int     `json:"tested_rows"`
	RowAlpha float64 `json:"row_alpha"`
	// Regressions and Inconclusive count the gated rows of each verdict; Violations the groups
	// of NEW with a safety violation, compared or not. UngatedRegressions counts regressions
	// of the metrics reported but not gated.
	Regressions        int `json:"regressions"`
	Inconclusive       int `json:"inconclusive"`
	Violations         int `json:"violations"`
	UngatedRegressions int `json:"ungated_regressions"`
	// TooFewRuns counts the gated rows whose runs could never reach RowAlpha, and NeedRuns is
	// the runs per side (both sides alike) with which they could; 0 when none.
	TooFewRuns int `json:"too_few_runs"`
	NeedRuns   int `json:"need_runs,omitempty"`
	// Groups are the driver-and-case groups found on both sides, in NEW's order.
	Groups []GroupReport `json:"groups"`
	// OnlyBase and OnlyNew name the groups found on one side only; they are not compared.
	OnlyBase []string `json:"only_base,omitempty"`
	OnlyNew  []string `json:"only_new,omitempty"`
	// BaseLabels and NewLabels are the labels the files of each side carry (results.File.Label,
	// lockbench run --label), each once, in file order; a file without one adds none. Empty
	// when no file of the side has one.
	BaseLabels []string `json:"base_labels,omitempty"`
	NewLabels  []string `json:"new_labels,omitempty"`
	// Warnings are differences between the sides that may explain a change (hosts, Redis
	// versions and settings, topologies, CPU placement, lockbench builds, driver settings,
	// the values of ignored case fields, incomplete runs).
	Warnings []string `json:"warnings,omitempty"`
}

// Failed reports whether the gate fails: a gated regression, a violation in
// NEW, a gated row with too few runs to ever tell (unless AllowInconclusive),
// or, in strict mode, an inconclusive gated row.
func (r *Report) Failed() bool {
	return r.Verdict != VerdictPass
}

// GroupReport compares one driver on one case. It is a plain value and safe
// for concurrent use.
type GroupReport struct {
	// Name is "driver workload/topology/…" for people.
	Name   string          `json:"name"`
	Driver string          `json:"driver"`
	Case   []results.Label `json:"case"`
	// BaseRuns and NewRuns count the runs on each side, measured or not.
	BaseRuns int   `json:"base_runs"`
	NewRuns  int   `json:"new_runs"`
	Rows     []Row `json:"rows"`
}

// Row compares one metric of one group. It is a plain value and safe for
// concurrent use.
type Row struct {
	Metric string `json:"metric"`
	Label  string `json:"label"`
	Unit   string `json:"unit,omitempty"`
	// Base and New summarise each side.
	Base Summary `json:"base"`
	New  Summary `json:"new"`
	// Delta is New's center over Base's, minus 1 (for counts: the mean per run); nil when
	// Base's is 0 and New's is not.
	Delta *float64 `json:"delta,omitempty"`
	// P is the two-sided Mann–Whitney U p-value of "BASE and NEW come from one
	// distribution", as benchstat reports it; 1 when the test could not run.
	P float64 `json:"p"`
	// PWorse is the one-sided p-value the gate decides on: of "NEW is worse than BASE made
	// worse by the threshold" (p(>t worse)); PBetter, the one-sided p of "NEW is better than
	// BASE", which an improvement rests on. Both are 1 when the test could not run; nil for
	// rows decided without a test (violations, identical values, one side unmeasured).
	PWorse  *float64 `json:"p_worse,omitempty"`
	PBetter *float64 `json:"p_better,omitempty"`
	// Threshold is the largest change for the worse tolerated, as a fraction.
	Threshold float64 `json:"threshold"`
	// Gated is whether the row's verdict can fail the gate; the others are reported only.
	Gated   bool    `json:"gated"`
	Verdict Verdict `json:"verdict"`
	// Note says why the verdict, when it is not plain.
	Note string `json:"note,omitempty"`

	metric results.Metric
	test   *rowTest // nil: decided without a test
}

// Summary is one side of a row. It is a plain value and safe for concurrent
// use.
type Summary struct {
	// N is the number of runs that measured the metric.
	N int `json:"n"`
	// Center is the median over the runs; for counts (errors, violations), the total.
	Center float64 `json:"center"`
	// Lo and Hi bound the 95% confidence interval of the median; nil when there are too few
	// runs for a finite one, and for counts.
	Lo *float64 `json:"lo,omitempty"`
	Hi *float64 `json:"hi,omitempty"`
	// Range is the ± percentage of the confidence interval as benchstat prints it ("3%",
	// "∞" when it is unbounded); empty for counts.
	Range string `json:"range,omitempty"`
	// Min and Max are the smallest and largest run, shown instead of an unbounded interval
	// (fewer than 6 runs at 95%); nil for counts.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`

	values []float64
}

// confidence is the level of the intervals shown, benchstat's.
const confidence = 0.95

// Compare compares NEW with BASE. Runs are grouped by driver and case
// (results.Run.Case) on each side, pooling every file given for the side; a
// group found on both sides gets one row per metric. Errors, which wrap
// ErrBadInput, are for bad options and for two sides with no group in common.
// It is safe for concurrent use.
func Compare(base, new []*results.File, opts Options) (*Report, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	baseGroups := results.GroupRunsIgnoring(allRuns(base), opts.Ignore)
	newGroups := results.GroupRunsIgnoring(allRuns(new), opts.Ignore)
	rep := &Report{Alpha: opts.Alpha, Strict: opts.Strict, AllowInconclusive: opts.AllowInconclusive, Gate: opts.Gate, Ignore: opts.Ignore,
		BaseLabels: fileLabels(base), NewLabels: fileLabels(new), Warnings: warnings(base, new, opts.Ignore)}
	key := func(g *results.Group) string { return g.Case().Without(opts.Ignore...).String() + "\x00" + g.Driver() }
	name := func(g *results.Group) string { return name(g, opts.Ignore) }

	index := make(map[string]*results.Group)
	for i := range baseGroups {
		index[key(&baseGroups[i])] = &baseGroups[i]
	}
	matched := make(map[string]bool)
	for i := range newGroups {
		ng := &newGroups[i]
		if ng.Violations > 0 {
			rep.Violations++
		}
		bg := index[key(ng)]
		if bg == nil {
			rep.OnlyNew = append(rep.OnlyNew, name(ng))
			continue
		}
		matched[key(ng)] = true
		gr := compareGroup(bg, ng, &opts)
		rep.Warnings = append(rep.Warnings, settingsWarnings(gr.Name, bg, ng)...)
		rep.Groups = append(rep.Groups, gr)
	}
	for i := range baseGroups {
		if !matched[key(&baseGroups[i])] {
			rep.OnlyBase = append(rep.OnlyBase, name(&baseGroups[i]))
		}
	}
	if len(rep.Groups) == 0 {
		hint := ""
		if fields := differingFields(baseGroups, newGroups, opts.Ignore); len(fields) > 0 {
			hint = fmt.Sprintf("; to compare across %s anyway: --ignore %s", strings.Join(fields, " and "), strings.Join(fields, ","))
		}
		return nil, badInput("BASE and NEW have no driver and case in common (BASE: %s; NEW: %s)%s",
			strings.Join(rep.OnlyBase, "; "), strings.Join(rep.OnlyNew, "; "), hint)
	}
	// The gate fails if any gated row regresses, so its false-alarm rate is that of all
	// gated rows together: each gets alpha/m (Bonferroni), and noise alone fails the gate
	// with probability at most alpha. Rows reported but not gated are judged at the same
	// level, so that a verdict means the same in every row.
	tested := 0
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			if r.test != nil && r.Gated {
				tested++
			}
		}
	}
	rep.Tested = tested
	rep.RowAlpha = opts.Alpha / float64(max(tested, 1))
	for _, g := range rep.Groups {
		for i := range g.Rows {
			r := &g.Rows[i]
			if r.test != nil {
				r.decide(rep.RowAlpha)
			}
			switch {
			case r.Verdict == VerdictRegression && !r.Gated:
				rep.UngatedRegressions++
			case !r.Gated:
			case r.Verdict == VerdictRegression:
				rep.Regressions++
			case r.Verdict == VerdictInconclusive:
				rep.Inconclusive++
				if r.test != nil && r.test.minP > rep.RowAlpha {
					rep.TooFewRuns++
				}
			}
		}
	}
	if rep.TooFewRuns > 0 {
		rep.NeedRuns = NeedRuns(rep.RowAlpha)
	}
	switch {
	case rep.Violations > 0:
		rep.Verdict = VerdictViolations
	case rep.Regressions > 0:
		rep.Verdict = VerdictRegression
	case rep.TooFewRuns > 0 && !opts.AllowInconclusive:
		rep.Verdict = VerdictTooFewRuns
	case opts.Strict && rep.Inconclusive > 0:
		rep.Verdict = VerdictInconclusive
	default:
		rep.Verdict = VerdictPass
	}
	return rep, nil
}

func allRuns(files []*results.File) []results.Run {
	var runs []results.Run
	for _, f := range files {
		runs = append(runs, f.Runs...)
	}
	return runs
}

// differingFields is the smallest set of case fields, beyond those already ignored, in which a
// NEW group differs from a BASE group of the same driver: what --ignore would need to match them.
// Nil when no driver is on both sides.
func differingFields(base, new []results.Group, ignore []string) []string {
	var best []string
	for i := range new {
		for j := range base {
			if new[i].Driver() != base[j].Driver() {
				continue
			}
			nc, bc := new[i].Case().Without(ignore...), base[j].Case().Without(ignore...)
			var diff []string
			for _, f := range results.CaseLabels() {
				if nc.Get(f) != bc.Get(f) {
					diff = append(diff, f)
				}
			}
			if len(diff) > 0 && (best == nil || len(diff) < len(best)) {
				best = diff
			}
		}
	}
	return best
}

// name is "driver workload/topology/concurrency/keys/…" with only the values, for people, less
// the ignored case fields.
func name(g *results.Group, ignore []string) string {
	c := g.Case().Without(ignore...)
	vals := make([]string, len(c))
	for i, l := range c {
		switch l.Name {
		case "workload", "topology":
			vals[i] = l.Value
		default:
			vals[i] = l.Name + "=" + l.Value
		}
	}
	return g.Driver() + " " + strings.Join(vals, "/")
}

func compareGroup(bg, ng *results.Group, opts *Options) GroupReport {
	gr := GroupReport{Name: name(ng, opts.Ignore), Driver: ng.Driver(), Case: ng.Case().Without(opts.Ignore...), BaseRuns: len(bg.Runs), NewRuns: len(ng.Runs)}
	metrics := opts.Metrics
	if !slices.Contains(metrics, "violations") {
		metrics = append(slices.Clip(metrics), "violations")
	}
	for _, mn := range metrics {
		m, _ := results.LookupMetric(mn)
		row, ok := compareMetric(m, bg.Values(m), ng.Values(m), opts)
		if ok {
			gr.Rows = append(gr.Rows, row)
		}
	}
	return gr
}

// compareMetric fills one row; ok is false when neither side measured m.
func compareMetric(m results.Metric, base, new []float64, opts *Options) (Row, bool) {
	if len(base) == 0 && len(new) == 0 {
		return Row{}, false
	}
	row := Row{Metric: m.Name, Label: m.Label, Unit: m.Unit, metric: m, P: 1}
	row.Base, row.New = summarize(m, base), summarize(m, new)
	if m.Name == "violations" || m.Name == "fencing-violations" {
		// No statistics: one violation is a broken lock.
		row.Verdict, row.Gated = VerdictPass, true
		if row.New.Center > 0 {
			row.Verdict, row.Note = VerdictViolations, "safety violations in NEW"
		}
		row.Delta = delta(m, row.Base, row.New)
		return row, true
	}
	row.Threshold = opts.threshold(m.Name)
	row.Gated = opts.gated(m.Name)
	row.Delta = delta(m, row.Base, row.New)
	switch {
	case len(base) == 0:
		row.Verdict, row.Note = VerdictInconclusive, "not measured in BASE"
		return row, true
	case len(new) == 0:
		row.Verdict, row.Note = VerdictInconclusive, "not measured in NEW"
		return row, true
	}
	thresholds := &benchmath.Thresholds{CompareAlpha: opts.Alpha}
	plain := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(base), thresholds), benchmath.NewSample(slices.Clone(new), thresholds))
	row.P = plain.P

	if allEqual(base, new) {
		row.Verdict, row.Note = VerdictPass, "identical"
		return row, true
	}
	// The gate's test: is NEW worse than BASE moved by the threshold? Significance here means
	// both "significant" and "beyond the threshold", with the error rate alpha bounds.
	factor := 1 + row.Threshold
	if m.HigherIsBetter {
		factor = 1 - row.Threshold
	}
	shifted := make([]float64, len(base))
	for i, v := range base {
		shifted[i] = v * factor
	}
	row.test = &rowTest{marginP: worseP(m, shifted, new), betterP: betterP(m, base, new), baseC: results.Median(base), newC: results.Median(new), factor: factor, minP: minP(len(base), len(new))}
	row.PWorse, row.PBetter = &row.test.marginP, &row.test.betterP
	return row, true
}

// worseP is the one-sided Mann–Whitney U p-value of "NEW is worse than shifted" (BASE made
// worse by the threshold): the question a gate asks. One-sided, because an improvement is no
// reason to fail; two-sided tests spend half of alpha on it, and with 5+5 runs that half was
// what left them unable ever to reach significance. 1 when the test cannot run (all equal).
func worseP(m results.Metric, shifted, new []float64) float64 { return oneSided(m, shifted, new, true) }

// betterP is the one-sided Mann–Whitney U p-value of "NEW is better than BASE"; 1 when the
// test cannot run.
func betterP(m results.Metric, base, new []float64) float64 { return oneSided(m, base, new, false) }

// oneSided is the one-sided U test of NEW against base in the direction worse (or better) means
// for m: greater is worse for latencies and costs, smaller for throughput.
func oneSided(m results.Metric, base, new []float64, worse bool) float64 {
	alt := stats.LocationGreater
	if m.HigherIsBetter == worse {
		alt = stats.LocationLess
	}
	res, err := stats.MannWhitneyUTest(new, base, alt)
	if err != nil {
		return 1
	}
	return res.P
}

// rowTest is what decide needs of a row that was tested.
type rowTest struct {
	marginP, betterP, baseC, newC, factor, minP float64
}

// decide sets the verdict of a tested row, at the per-row level alpha (the report's alpha
// shared out over the tested rows).
func (row *Row) decide(alpha float64) {
	t := row.test
	worse := func(a, b float64) bool { // a is worse than b
		if row.metric.HigherIsBetter {
			return a < b
		}
		return a > b
	}
	switch {
	case t.marginP <= alpha && worse(t.newC, t.baseC*t.factor):
		row.Verdict = VerdictRegression
		row.Note = fmt.Sprintf("p(>%s worse) = %.2g ≤ %.2g", formatPct(row.Threshold), t.marginP, alpha)
	case t.betterP <= alpha && worse(t.baseC, t.newC):
		row.Verdict = VerdictImproved
		row.Note = fmt.Sprintf("p(better) = %.2g ≤ %.2g", t.betterP, alpha)
	case t.minP > alpha:
		row.Verdict = VerdictInconclusive
		row.Note = fmt.Sprintf("too few runs: %s can never reach p ≤ %.2g; %d a side can", row.nCell(), alpha, NeedRuns(alpha))
	case worse(t.newC, t.baseC*t.factor):
		row.Verdict = VerdictInconclusive
		row.Note = fmt.Sprintf("median >%s worse, but p(>%s worse) = %.2g > %.2g", formatPct(row.Threshold), formatPct(row.Threshold), t.marginP, alpha)
	default:
		row.Verdict = VerdictPass
	}
}

func summarize(m results.Metric, xs []float64) Summary {
	s := Summary{N: len(xs), values: xs}
	if len(xs) == 0 {
		return s
	}
	if m.Count {
		for _, x := range xs {
			s.Center += x
		}
		return s
	}
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(xs), &benchmath.DefaultThresholds), confidence)
	s.Center = sum.Center
	s.Range = sum.PctRangeString()
	lo, hi := slices.Min(xs), slices.Max(xs)
	s.Min, s.Max = &lo, &hi
	if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) {
		s.Lo, s.Hi = &sum.Lo, &sum.Hi
	}
	return s
}

// delta is New over Base minus 1, on the centers, or for counts on the means per run.
func delta(m results.Metric, base, new Summary) *float64 {
	b, n := base.Center, new.Center
	if m.Count {
		if base.N == 0 || new.N == 0 {
			return nil
		}
		b, n = b/float64(base.N), n/float64(new.N)
	}
	var d float64
	switch {
	case b == n:
		d = 0
	case b == 0:
		return nil
	default:
		d = n/b - 1
	}
	return &d
}

func allEqual(a, b []float64) bool {
	for _, x := range a {
		if x != a[0] {
			return false
		}
	}
	for _, x := range b {
		if x != a[0] {
			return false
		}
	}
	return true
}

// minP is the smallest one-sided p-value the U test can give for samples of
// n1 and n2 distinct values, 1/C(n1+n2, n1): when it is above alpha, no
// difference, however large, can be significant.
func minP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	// C(n1+n2, n1) grows fast; in floats it cannot overflow before the
	// ratio is far below any alpha.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return min(1, 1/c)
}

// NeedRuns is the smallest number of runs a side (the same on both) with which the gate's
// one-sided test can reach p ≤ alpha: 3 at 0.05, 4 at 0.025 (two gated rows), 5 at 0.01
// (five), 6 at 0.002. It is safe for
// concurrent use.
func NeedRuns(alpha float64) int {
	n := 1
	for minP(n, n) > alpha && n < 1000 {
		n++
	}
	return n
}
