package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/thresholds"
)

// The metric table of docs/thresholds.md is checked against the metric definitions
// (results.Metrics for run's thresholds and compare, thresholds.MetricKnee and MetricCapacity
// for a sweep's): one row per metric, both ways, and in each row the unit, which way is
// better, and whether --abort-on-fail can check it while a run measures, as the code has them.

// docMetricRow is one row of the table: its line and its cells, by column name.
type docMetricRow struct {
	line  int
	cells map[string]string
}

// docMetricTable returns the rows of the first table of text whose header starts with
// "metric".
func docMetricTable(text string) []docMetricRow {
	lines := strings.Split(text, "\n")
	for i := 0; i+1 < len(lines); i++ {
		head := tableCells(strings.TrimSpace(lines[i]))
		if len(head) == 0 || head[0] != "metric" || !docTableRule.MatchString(strings.TrimSpace(lines[i+1])) {
			continue
		}
		var rows []docMetricRow
		for j := i + 2; j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "|"); j++ {
			cells := tableCells(strings.TrimSpace(lines[j]))
			r := docMetricRow{line: j + 1, cells: map[string]string{}}
			for k, name := range head {
				if k < len(cells) {
					r.cells[name] = strings.Trim(cells[k], "`")
				}
			}
			rows = append(rows, r)
		}
		return rows
	}
	return nil
}

// TestDocMetricTable checks docs/thresholds.md's metric table against the definitions.
func TestDocMetricTable(t *testing.T) {
	t.Parallel()
	const page = "docs/thresholds.md"
	text, err := os.ReadFile(filepath.Join("..", "..", page))
	if err != nil {
		t.Fatal(err)
	}
	rows := docMetricTable(string(text))
	if len(rows) == 0 {
		t.Fatalf("%s: no table headed | metric | …", page)
	}
	defs := map[string]results.Metric{}
	sweep := map[string]bool{}
	for _, m := range results.Metrics {
		defs[m.Name] = m
	}
	for _, m := range []results.Metric{thresholds.MetricKnee, thresholds.MetricCapacity} {
		defs[m.Name] = m
		sweep[m.Name] = true
	}
	seen := map[string]bool{}
	for _, r := range rows {
		name := r.cells["metric"]
		m, ok := defs[name]
		if !ok {
			t.Errorf("%s:%d: %q is not a metric (results.Metrics, or a sweep's knee and capacity)", page, r.line, name)
			continue
		}
		if seen[name] {
			t.Errorf("%s:%d: %s listed twice", page, r.line, name)
		}
		seen[name] = true
		unit := m.Unit
		switch {
		case unit == "" && m.Count && !sweep[name]:
			unit = "count"
		case unit == "":
			unit = "-" // the knee: acq/s, or workers in a concurrency sweep
		}
		if got := r.cells["unit"]; got != unit {
			t.Errorf("%s:%d: %s's unit is %q, the code's %q", page, r.line, name, got, unit)
		}
		better := "lower"
		if m.HigherIsBetter {
			better = "higher"
		}
		if got := r.cells["better"]; got != better {
			t.Errorf("%s:%d: %s: better %q, the code says %q", page, r.line, name, got, better)
		}
		live := "no"
		switch {
		case sweep[name]:
			live = "sweep"
		default:
			value := "1"
			if m.Latency || m.Unit == "µs/acq" {
				value = "1ms"
			}
			th, err := thresholds.Parse(name + "<" + value)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if th.CanAbort() {
				live = "yes"
			}
		}
		if got := r.cells["while measuring"]; got != live {
			t.Errorf("%s:%d: %s: while measuring %q, the code says %q", page, r.line, name, got, live)
		}
	}
	for name := range defs {
		if !seen[name] {
			t.Errorf("%s does not list the metric %s", page, name)
		}
	}
}
