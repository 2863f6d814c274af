package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
)

// row is one line of a configuration table: a key and its value, one or more lines of text.
type row struct {
	Key   string
	Lines []string
}

// table is a table with a header.
type table struct {
	// Class styles the table ("summary": numbers kept on one line).
	Class   string
	Caption string
	Head    []string
	Rows    [][]string
}

var (
	metricP50, _      = results.LookupMetric("p50")
	metricRate, _     = results.LookupMetric("throughput")
	metricCount, _    = results.LookupMetric("errors")
	metricRedisCPU, _ = results.LookupMetric("redis-cpu")
)

func lat(us float64) string { return metricP50.Format(us) }

// summaryTable lists each group's medians, as lockbench run's summary does.
func (r *Report) summaryTable() *table {
	if len(r.groups) == 0 {
		return nil
	}
	t := &table{
		Class:   "summary",
		Caption: "Medians over the rounds that measured something; errors and violations are totals.",
		Head:    []string{"driver", "rounds", "acq/s", "acq/s min–max", "acq p50", "acq p99", "acq p99.9", "acq max", "cmds/acq", "redis cpu/acq", "redis busy", "projected acq/s", "errors", "violations"},
	}
	for _, g := range r.summaryOrder() {
		spread := "-"
		if g.Measured > 1 {
			spread = metricRate.Format(g.MinThroughputPerS) + "–" + metricRate.Format(g.MaxThroughputPerS)
		}
		rounds := strconv.Itoa(len(g.Runs))
		if g.Measured != len(g.Runs) {
			rounds = fmt.Sprintf("%d (%d measured)", len(g.Runs), g.Measured)
		}
		rate, cmds := "-", "-"
		if g.Measured > 0 {
			rate = metricRate.Format(g.ThroughputPerS)
		}
		if g.CommandsPerAcquisition > 0 {
			cmds = strconv.FormatFloat(g.CommandsPerAcquisition, 'f', 2, 64)
		}
		rcpu, busy, proj := "-", "-", "-"
		if g.ServerCPUPerAcquisitionUS > 0 {
			rcpu = metricRedisCPU.Format(g.ServerCPUPerAcquisitionUS)
		}
		if g.ProjectedPerS > 0 {
			busy, proj = fmt.Sprintf("%.0f%%", 100*g.RedisBusy), metricRate.Format(g.ProjectedPerS)
		}
		a := g.AcquireLatencyUS
		t.Rows = append(t.Rows, []string{g.label, rounds, rate, spread, lat(a.P50), lat(a.P99), lat(a.P999), lat(a.Max), cmds,
			rcpu, busy, proj, metricCount.Format(float64(g.Errors)), metricCount.Format(float64(g.Violations))})
	}
	t.dropEmptyColumns()
	if slices.Contains(t.Head, "projected acq/s") {
		t.Caption += " Projected acq/s: the throughput at which the busiest Redis master's CPU would be fully busy, at this run's mix (redis busy: its CPU use while measured)."
	}
	return t
}

// summaryOrder is the groups in the summary's order: by driver (in the order the drivers
// first appear), then case, then set, so that the rows a reader compares, one driver's v1.2
// and v1.3 on one topology, are neighbours, as its bars are.
func (r *Report) summaryOrder() []*group {
	rank := func(key func(*group) string) map[string]int {
		m := make(map[string]int)
		for _, g := range r.groups {
			if _, ok := m[key(g)]; !ok {
				m[key(g)] = len(m)
			}
		}
		return m
	}
	driver := rank(func(g *group) string { return g.Driver() })
	cases := rank(func(g *group) string { return g.cases })
	sets := rank(func(g *group) string { return g.set })
	out := slices.Clone(r.groups)
	slices.SortStableFunc(out, func(a, b *group) int {
		return cmp.Or(cmp.Compare(driver[a.Driver()], driver[b.Driver()]), cmp.Compare(cases[a.cases], cases[b.cases]),
			cmp.Compare(sets[a.set], sets[b.set]))
	})
	return out
}

// dropEmptyColumns leaves out the columns after the first whose every row is "-" (the
// Redis CPU of runs that did not measure it): a column that says nothing only widens the
// table.
func (t *table) dropEmptyColumns() {
	keep := make([]bool, len(t.Head))
	for c := range t.Head {
		keep[c] = c == 0 || len(t.Rows) == 0
		for _, row := range t.Rows {
			if c < len(row) && row[c] != "-" {
				keep[c] = true
			}
		}
	}
	filter := func(cells []string) []string {
		var out []string
		for c, v := range cells {
			if c >= len(keep) || keep[c] {
				out = append(out, v)
			}
		}
		return out
	}
	t.Head = filter(t.Head)
	for i := range t.Rows {
		t.Rows[i] = filter(t.Rows[i])
	}
}

// table lists a sweep's steps, driver by driver, as lockbench sweep judged them.
func (v *sweepView) table() *table {
	head := []string{"driver", "load", "achieved acq/s", "acq p50", "acq p99"}
	extra := v.extraPercentile()
	if extra {
		head = append(head, "acq "+v.sloName())
	}
	rounds := v.sweep.MaxRounds > 1
	if rounds {
		head = append(head, v.sloName()+" interval", "rounds")
	}
	head = append(head, "errors", "verdict", "knee")
	slo := v.sweep.SLO
	t := &table{Head: head, Caption: fmt.Sprintf("SLO: acquire %s at most %s.", v.sloName(), lat(slo.LimitUS))}
	if rounds {
		t.Caption += fmt.Sprintf(" Each step %d rounds (up to %d while uncertain), pooled; the interval is of the %s across rounds (%s).",
			v.sweep.Rounds, v.sweep.MaxRounds, v.sloName(), v.sweep.IntervalMethod)
	}
	if v.name != "" {
		t.Caption = v.name + ". " + t.Caption
	}
	for _, d := range v.drivers {
		for i, st := range d.steps {
			p50, p99, errs := "-", "-", "-"
			if r := st.run; r != nil {
				p50, p99, errs = lat(r.AcquireLatencyUS.P50), lat(r.AcquireLatencyUS.P99), metricCount.Format(float64(r.Errors))
				// Several rounds: the pooled figures the verdict was made on.
				if st.P50US > 0 {
					p50 = lat(st.P50US)
				}
				if slo.Percentile == 99 && len(st.Runs) > 1 {
					p99 = lat(st.LatencyUS)
				}
			}
			load := v.loadLabel(st.Load)
			if st.Refined {
				load += " (refined)"
			}
			row := []string{d.Driver, load, metricRate.Format(st.ThroughputPerS), p50, p99}
			if extra {
				row = append(row, lat(st.LatencyUS))
			}
			if rounds {
				iv := "-"
				if st.Interval != nil {
					iv = lat(st.Interval.LowUS) + " – " + lat(st.Interval.HighUS)
				}
				row = append(row, iv, strconv.Itoa(max(len(st.Runs), 1)))
			}
			verdict := st.Verdict
			if st.Reason != "" {
				verdict += ": " + st.Reason
			}
			row = append(row, errs, verdict, yes(i == d.knee))
			t.Rows = append(t.Rows, row)
		}
		var notes []string
		if b := d.Knee; b != nil && (b.OKStep > 0 || b.OverStep > 0) {
			notes = append(notes, "knee: "+v.bracket(b))
			if b.ProjectedServerCapacityPerS > 0 {
				notes = append(notes, "projected server-bound capacity "+metricRate.Format(b.ProjectedServerCapacityPerS)+" acq/s")
			}
			if c := v.crossings(d.steps, b.Crossings); c != "" {
				notes = append(notes, "not one crossing of the SLO (against it: "+c+"): another sweep may find another knee")
			}
		}
		if d.knee < 0 {
			notes = append(notes, "no knee: no step kept the SLO")
		}
		if d.StoppedEarly {
			notes = append(notes, "stopped early: "+d.StopReason)
		}
		if len(notes) > 0 {
			row := make([]string, len(head))
			row[0] = d.Driver
			row[1] = strings.Join(notes, "; ")
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// crossings names the steps numbered in nums (KneeBracket.Crossings) by load and verdict:
// "10000/s (uncertain), 40000/s (ok)"; "" for none.
func (v *sweepView) crossings(steps []sweepPoint, nums []int) string {
	var parts []string
	for _, st := range steps {
		if slices.Contains(nums, st.Step) {
			parts = append(parts, v.loadLabel(st.Load)+" ("+st.Verdict+")")
		}
	}
	return strings.Join(parts, ", ")
}

// bracket says where the knee lies: "≥ 20000/s (ok), < 21000/s (over), 4.8% wide".
func (v *sweepView) bracket(b *results.KneeBracket) string {
	var parts []string
	if b.OKStep > 0 {
		parts = append(parts, "≥ "+v.loadLabel(b.OKLoad)+" (ok)")
	}
	if b.OverStep > 0 {
		if b.OverVerdict == results.VerdictUncertain {
			parts = append(parts, v.loadLabel(b.OverLoad)+" uncertain")
		} else {
			parts = append(parts, "< "+v.loadLabel(b.OverLoad)+" ("+b.OverVerdict+")")
		}
	}
	s := strings.Join(parts, ", ")
	if b.Width > 0 {
		s += fmt.Sprintf(", %.1f%% wide", 100*b.Width)
	}
	if b.Refined != "" {
		s += " (refinement: " + b.Refined + ")"
	}
	return s
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
}

// configRows describe one source: the run's configuration, topology, host and versions, and
// what was skipped or did not finish.
func configRows(s Source) []row {
	f := s.File
	var rows []row
	add := func(k string, v ...string) {
		if len(v) > 0 && v[0] != "" {
			rows = append(rows, row{k, v})
		}
	}
	add("file", s.Name)
	add("label", f.Label) // the file's own (run --label), whatever set the page drew it in
	if !f.CreatedAt.IsZero() {
		add("created", f.CreatedAt.UTC().Format(time.RFC3339))
	}
	add("lockbench", strings.TrimSpace(f.Tool+" "+f.Version)+", result schema "+strconv.Itoa(f.Schema))
	add("command", strings.Join(f.Command, " "))
	if f.Complete {
		add("complete", "yes")
	} else {
		add("complete", "no: interrupted or failed part way; the runs hold what was measured")
	}
	add("Redis", f.RedisVersion)
	if t := f.Topology; t != nil {
		desc := t.Spec
		if desc == "" {
			desc = t.Kind
		}
		if t.Provider != "" {
			desc += " (" + t.Provider + ")"
		}
		if t.MasterName != "" {
			desc += ", master name " + t.MasterName
		}
		add("topology", desc)
		var nodes []string
		for _, n := range t.Nodes {
			nodes = append(nodes, n.Addr+" "+n.Role)
		}
		add("nodes", strings.Join(nodes, ", "))
	} else {
		add("topology", distinct(f.Runs, func(r *results.Run) string {
			if r.TopologySpec != "" {
				return r.TopologySpec
			}
			return r.Topology
		}))
	}
	h := f.Host
	hostname := h.Hostname
	if hostname != "" {
		hostname += ": "
	}
	add("host", fmt.Sprintf("%s%s/%s, %d CPUs, GOMAXPROCS %d", hostname, h.GOOS, h.GOARCH, h.NumCPU, h.GOMAXPROCS))
	add("Go", h.GoVersion)
	if f.Repeat > 1 {
		add("repeat", strconv.Itoa(f.Repeat)+" rounds, interleaved")
	}
	add("baseline", f.Baseline)
	// One row per driver, its settings one per line: they are long ("client=rueidis v1.0.79
	// auto-pipelining").
	seen := make(map[string]bool)
	for _, r := range f.Runs {
		if seen[r.Driver] {
			continue
		}
		seen[r.Driver] = true
		settings := []string{"(no settings recorded)"}
		if len(r.DriverSettings) > 0 {
			settings = nil
			for _, k := range slices.Sorted(maps.Keys(r.DriverSettings)) {
				settings = append(settings, k+": "+r.DriverSettings[k])
			}
		}
		add("driver "+r.Driver, settings...)
	}
	add("workload", distinct(f.Runs, func(r *results.Run) string { return r.Workload }))
	add("pacing", distinct(f.Runs, func(r *results.Run) string {
		if r.Pacing != results.PacingOpen {
			return "closed loop"
		}
		return fmt.Sprintf("open loop, %s arrivals at %s/s", r.Arrival, strconv.FormatFloat(r.TargetRate, 'f', -1, 64))
	}))
	add("concurrency", distinct(f.Runs, func(r *results.Run) string { return strconv.Itoa(r.Concurrency) }))
	add("keys", distinct(f.Runs, func(r *results.Run) string { return strconv.Itoa(r.Keys) + " " + r.KeyDist }))
	add("hold", distinct(f.Runs, func(r *results.Run) string {
		if r.HoldUS <= 0 {
			return "none"
		}
		return lat(r.HoldUS)
	}))
	add("warm-up", distinct(f.Runs, func(r *results.Run) string { return seconds(r.WarmupS) }))
	add("measured", durationRange(f.Runs))
	add("seed", distinct(f.Runs, func(r *results.Run) string { return strconv.FormatInt(r.Seed, 10) }))
	for _, sk := range f.Skipped {
		add("skipped "+sk.Driver, sk.Reason)
	}
	for _, r := range f.Runs {
		if !r.Complete {
			name := "incomplete " + r.Driver
			if r.Round > 0 {
				name += " round " + strconv.Itoa(r.Round)
			}
			reason := r.Incomplete
			if reason == "" {
				reason = "did not finish"
			}
			add(name, reason)
		}
	}
	return rows
}

// distinct lists the different values of f over the runs, in order of appearance.
func distinct(runs []results.Run, f func(*results.Run) string) string {
	var out []string
	for i := range runs {
		if v := f(&runs[i]); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return strings.Join(out, ", ")
}

// durationRange is the measured phases' length, or their range when they differ (interrupted
// runs, timer jitter).
func durationRange(runs []results.Run) string {
	if len(runs) == 0 {
		return ""
	}
	lo, hi := runs[0].DurationS, runs[0].DurationS
	for _, r := range runs {
		lo, hi = min(lo, r.DurationS), max(hi, r.DurationS)
	}
	if seconds(lo) == seconds(hi) {
		return seconds(lo) + " per run"
	}
	return seconds(lo) + "–" + seconds(hi) + " per run"
}

func seconds(s float64) string {
	if s <= 0 {
		return "0s"
	}
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}
