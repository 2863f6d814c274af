package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/compare"
	"github.com/lockbench/lockbench/results"
)

// Set labels of a comparison's page.
const (
	BaseLabel = "BASE"
	NewLabel  = "NEW"
)

// compareView is the BASE/NEW section of a comparison's page: compare's verdict and its rows,
// as lockbench compare printed them.
type compareView struct {
	Verdict string
	Failed  bool
	// Class colors the verdict: "fail", "pass", or "caveat" for a pass with inconclusive
	// rows, rows too few to decide or regressions of ungated metrics.
	Class string
	// Labels says which labels the files of each side carry; "" when none does.
	Labels  string
	Head    []string
	Rows    []compareRow
	Caption string
}

// compareRow is one metric of one driver and case; Class styles its verdict cell.
type compareRow struct {
	Cells []string
	Class string
}

// BuildCompare makes the BASE/NEW page of a comparison: cmp, what compare.Compare (or
// compare.Paths) made of the files base and new, on top, as a table of the medians of each
// driver and case side by side with the change, the one-sided p and the verdict of every
// metric, compare's warnings and verdict above it; then the report of the files labelled BASE
// and NEW (Build): the grouped bars of each driver's BASE and NEW throughput and Redis CPU, the
// spectra and the rest. It judges nothing itself, so the page and compare's output cannot
// disagree. cmp may be nil: then the page is the labelled report alone. It is safe for
// concurrent use with distinct arguments.
func BuildCompare(base, new []*results.File, cmp *compare.Report, opts Options) (*Report, error) {
	if opts.Title == "" {
		opts.Title = "lockbench compare: BASE and NEW"
	}
	var sources []Source
	for i, f := range base {
		sources = append(sources, Source{Name: BaseLabel + " file " + strconv.Itoa(i+1), Label: BaseLabel, File: f})
	}
	for i, f := range new {
		sources = append(sources, Source{Name: NewLabel + " file " + strconv.Itoa(i+1), Label: NewLabel, File: f})
	}
	r, err := Build(sources, opts)
	if err != nil {
		return nil, err
	}
	if cmp == nil {
		return r, nil
	}
	r.compare = newCompareView(cmp)
	var notes []string
	if len(cmp.BaseLabels) > 0 || len(cmp.NewLabels) > 0 {
		// The files' own labels (run --label): the page draws the sides as BASE and NEW.
		side := func(labels []string) string {
			if len(labels) == 0 {
				return "no label"
			}
			return "labelled " + strings.Join(labels, " + ")
		}
		// Under the verdict, where a reader looks for what BASE and NEW are.
		r.compare.Labels = fmt.Sprintf("BASE: files %s; NEW: files %s.", side(cmp.BaseLabels), side(cmp.NewLabels))
	}
	for _, w := range cmp.Warnings {
		notes = append(notes, "Warning: "+w)
	}
	if len(cmp.OnlyBase) > 0 {
		notes = append(notes, "Only in BASE, not compared: "+strings.Join(cmp.OnlyBase, "; ")+".")
	}
	if len(cmp.OnlyNew) > 0 {
		notes = append(notes, "Only in NEW, not compared: "+strings.Join(cmp.OnlyNew, "; ")+".")
	}
	r.Notes = append(notes, r.Notes...)
	return r, nil
}

// WriteCompare builds the BASE/NEW page (BuildCompare) and writes it with its charts into dir,
// which must exist (see CheckDir): what lockbench compare --report DIR does. It returns the
// paths written, the page first, also when it fails part way.
func WriteCompare(dir string, base, new []*results.File, cmp *compare.Report, opts Options) ([]string, error) {
	r, err := BuildCompare(base, new, cmp, opts)
	if err != nil {
		return nil, err
	}
	return r.WriteFiles(dir)
}

// WriteComparePaths is WriteCompare of the result files at basePath and newPath (files or
// directories, read as compare.Load reads them), its title naming both: the page of lockbench
// compare --report DIR BASE NEW. It returns the paths written, also when it fails part way.
func WriteComparePaths(dir, basePath, newPath string, cmp *compare.Report) ([]string, error) {
	base, err := compare.Load(basePath)
	if err != nil {
		return nil, err
	}
	new, err := compare.Load(newPath)
	if err != nil {
		return nil, err
	}
	return WriteCompare(dir, base, new, cmp, Options{Title: "lockbench compare: BASE " + basePath + ", NEW " + newPath})
}

// newCompareView lays cmp's rows out as lockbench compare's text does: a group's name on its
// first row only, short (the driver and the case values that differ between groups).
func newCompareView(cmp *compare.Report) *compareView {
	v := &compareView{
		Verdict: headline(cmp),
		Class:   verdictClass(cmp),
		Failed:  cmp.Failed(),
		Head:    []string{"driver", "metric", "BASE", "NEW", "change", "p(worse)", "runs", "verdict"},
		Caption: fmt.Sprintf("Medians of BASE and NEW, with ± the 95%% confidence interval of the median (or the runs' "+
			"[min–max] when too few runs bound it); errors and violations are totals. p(worse) is the one-sided "+
			"Mann–Whitney p of NEW being worse than BASE by more than the threshold; a gated row regresses below "+
			"%.2g (α %.2g over %d tested rows).", cmp.RowAlpha, cmp.Alpha, cmp.Tested),
	}
	differ := make(map[string]bool)
	first := make(map[string]string)
	for _, g := range cmp.Groups {
		for _, l := range g.Case {
			if f, ok := first[l.Name]; !ok {
				first[l.Name] = l.Value
			} else if f != l.Value {
				differ[l.Name] = true
			}
		}
	}
	for _, g := range cmp.Groups {
		name := []string{g.Driver}
		for _, l := range g.Case {
			if differ[l.Name] {
				name = append(name, caseText(l))
			}
		}
		for i, row := range g.Rows {
			m, ok := results.LookupMetric(row.Metric)
			if !ok {
				m = results.Metric{Name: row.Metric}
			}
			label := row.Label
			if label == "" {
				label = row.Metric
			}
			group := ""
			if i == 0 {
				group = strings.Join(name, " ")
			}
			v.Rows = append(v.Rows, compareRow{
				Cells: []string{group, label, summaryCell(m, row.Base), summaryCell(m, row.New), deltaCell(row),
					pCell(row), nCell(row), verdictCell(row)},
				Class: "v-" + string(row.Verdict),
			})
		}
	}
	return v
}

// headline is compare's own first line ("PASS: no regression, but 19 inconclusive gated
// rows (…)"), so that the page says what the command said, caveats included: a bare "ok"
// above a table of yellow rows misleads.
func headline(cmp *compare.Report) string {
	var buf bytes.Buffer
	if err := cmp.WriteText(&buf); err == nil {
		line, _, _ := strings.Cut(buf.String(), "\n")
		if h, ok := strings.CutPrefix(line, "lockbench compare: "); ok && h != "" {
			return h
		}
	}
	if cmp.Failed() {
		return string(cmp.Verdict) + ": the gate fails"
	}
	return string(cmp.Verdict) + ": the gate passes"
}

func verdictClass(cmp *compare.Report) string {
	switch {
	case cmp.Failed():
		return "fail"
	case cmp.Inconclusive > 0 || cmp.TooFewRuns > 0 || cmp.UngatedRegressions > 0:
		return "caveat"
	}
	return "pass"
}

// summaryCell is one side of a row as lockbench compare prints it.
func summaryCell(m results.Metric, s compare.Summary) string {
	if s.N == 0 {
		return "-"
	}
	v := m.Format(s.Center)
	switch {
	case s.Lo == nil && s.Min != nil && s.N > 1:
		v += " [" + m.Format(*s.Min) + "–" + m.Format(*s.Max) + "]"
	case s.Range != "":
		v += " ±" + s.Range
	}
	return v
}

func deltaCell(row compare.Row) string {
	switch {
	case row.Delta == nil && row.Base.N > 0 && row.New.N > 0:
		return "+∞"
	case row.Delta == nil:
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", 100**row.Delta)
}

func pCell(row compare.Row) string {
	if row.PWorse == nil {
		return "-"
	}
	return strconv.FormatFloat(*row.PWorse, 'g', 2, 64)
}

func nCell(row compare.Row) string {
	if row.Base.N == row.New.N {
		return strconv.Itoa(row.Base.N)
	}
	return fmt.Sprintf("%d+%d", row.Base.N, row.New.N)
}

func verdictCell(row compare.Row) string {
	v := string(row.Verdict)
	if row.Note != "" {
		v += " (" + row.Note + ")"
	}
	if !row.Gated && row.Verdict != compare.VerdictPass {
		v += " [not gated]"
	}
	return v
}
