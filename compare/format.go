package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Formats lists the values WriteFormat takes.
var Formats = []string{"text", "json", "markdown"}

// WriteFormat writes r in format "text", "json" or "markdown". An unknown
// format is an error wrapping ErrBadInput. It is safe for concurrent use with
// distinct writers.
func (r *Report) WriteFormat(w io.Writer, format string) error {
	switch format {
	case "text":
		return r.WriteText(w)
	case "json":
		return r.WriteJSON(w)
	case "markdown", "md":
		return r.WriteMarkdown(w)
	}
	return CheckFormat(format)
}

// CheckFormat returns nil when WriteFormat takes format, and otherwise an error that names the
// formats and wraps ErrBadInput, so that a command can refuse a format before it compares.
func CheckFormat(format string) error {
	switch format {
	case "text", "json", "markdown", "md":
		return nil
	}
	return badInput("format %q: want %s", format, strings.Join(Formats, ", "))
}

// WriteJSON writes r as indented JSON. It is safe for concurrent use with
// distinct writers.
func (r *Report) WriteJSON(w io.Writer) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// headline says the verdict in one line.
func (r *Report) headline() string {
	var s string
	switch r.Verdict {
	case VerdictPass:
		s = "PASS: no regression"
	case VerdictRegression:
		s = fmt.Sprintf("FAIL: %d %s", r.Regressions, plural(r.Regressions, "regression", "regressions"))
	case VerdictViolations:
		s = fmt.Sprintf("FAIL: safety violations in NEW (%d %s)", r.Violations, plural(r.Violations, "group", "groups"))
	case VerdictInconclusive:
		s = fmt.Sprintf("FAIL (--strict): %d inconclusive %s", r.Inconclusive, plural(r.Inconclusive, "row", "rows"))
	case VerdictTooFewRuns:
		s = fmt.Sprintf("FAIL: cannot decide: %d gated %s had too few runs for the test ever to reach p ≤ %.2g; run %d a side (--repeat %d), or pass --allow-inconclusive",
			r.TooFewRuns, plural(r.TooFewRuns, "row", "rows"), r.RowAlpha, r.NeedRuns, r.NeedRuns)
	}
	if r.Verdict == VerdictPass && r.TooFewRuns > 0 {
		s += fmt.Sprintf(", but only because --allow-inconclusive: %d gated %s had too few runs to ever tell (%d a side would)", r.TooFewRuns, plural(r.TooFewRuns, "row", "rows"), r.NeedRuns)
	} else if r.Verdict == VerdictPass && r.Inconclusive > 0 {
		s += fmt.Sprintf(", but %d inconclusive gated %s (more runs would tell; --strict fails on them)", r.Inconclusive, plural(r.Inconclusive, "row", "rows"))
	}
	if r.UngatedRegressions > 0 {
		s += fmt.Sprintf("; %d %s in metrics reported but not gated (--gate adds them)", r.UngatedRegressions, plural(r.UngatedRegressions, "regression", "regressions"))
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// cell formats one side of a row: the median with its ± range, or a count's total.
func (row *Row) cell(s Summary) string {
	if s.N == 0 {
		return "-"
	}
	v := row.metric.Format(s.Center)
	switch {
	case s.Lo == nil && s.Min != nil && s.N > 1:
		// Too few runs for a bounded 95% interval: "±∞" says nothing, the runs' range does.
		v += " [" + row.metric.Format(*s.Min) + "–" + row.metric.Format(*s.Max) + "]"
	case s.Range != "":
		v += " ±" + s.Range
	}
	return v
}

func (row *Row) deltaCell() string {
	switch {
	case row.Delta == nil && row.Base.N > 0 && row.New.N > 0:
		return "+∞"
	case row.Delta == nil:
		return "-"
	}
	return fmt.Sprintf("%+.2f%%", 100**row.Delta)
}

func (row *Row) pCell() string {
	if row.PWorse == nil {
		return "-"
	}
	return strconv.FormatFloat(*row.PWorse, 'g', 2, 64)
}

func (row *Row) nCell() string {
	if row.Base.N == row.New.N {
		return strconv.Itoa(row.Base.N)
	}
	return fmt.Sprintf("%d+%d", row.Base.N, row.New.N)
}

func (row *Row) verdictCell(upper bool) string {
	v := string(row.Verdict)
	if upper && row.Verdict != VerdictPass && row.Verdict != VerdictImproved {
		v = strings.ToUpper(v)
	}
	if row.Note != "" {
		v += " (" + row.Note + ")"
	}
	if !row.Gated && row.Verdict != VerdictPass {
		v += " [not gated]"
	}
	return v
}

// WriteText writes r as plain text for people: the verdict, the warnings,
// then per group a benchstat-like table (base, new, delta, p, n) with a
// verdict per row. Medians carry benchstat's ± range of their 95% confidence
// interval; errors and violations are totals over the runs. It is safe for
// concurrent use with distinct writers.
func (r *Report) WriteText(w io.Writer) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "lockbench compare: %s\n", r.headline())
	if l := r.labelsLine(); l != "" {
		fmt.Fprintln(&buf, l)
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&buf, "warning: %s\n", wn)
	}
	for _, g := range r.Groups {
		fmt.Fprintf(&buf, "\n%s (BASE %d runs, NEW %d runs)\n", g.Name, g.BaseRuns, g.NewRuns)
		tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "metric\tbase\tnew\tdelta\tp(worse)\tn\tverdict")
		for i := range g.Rows {
			row := &g.Rows[i]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Label, row.cell(row.Base), row.cell(row.New),
				row.deltaCell(), row.pCell(), row.nCell(), row.verdictCell(true))
		}
		tw.Flush() // cannot fail: it writes to a bytes.Buffer
	}
	r.writeUnmatched(&buf, "")
	fmt.Fprintf(&buf, "\n%s\n", r.footnote())
	_, err := w.Write(buf.Bytes())
	return err
}

func (r *Report) writeUnmatched(buf *bytes.Buffer, bullet string) {
	if len(r.OnlyBase) > 0 {
		fmt.Fprintf(buf, "\nonly in BASE, not compared:\n")
		for _, n := range r.OnlyBase {
			fmt.Fprintf(buf, "%s  %s\n", bullet, n)
		}
	}
	if len(r.OnlyNew) > 0 {
		fmt.Fprintf(buf, "\nonly in NEW, not compared:\n")
		for _, n := range r.OnlyNew {
			fmt.Fprintf(buf, "%s  %s\n", bullet, n)
		}
	}
}

func (r *Report) footnote() string {
	return fmt.Sprintf("Medians ± the 95%% confidence interval, or [the runs' min–max] where there are too few runs (under 6) for a bounded one; "+
		"errors and violations are totals over the runs. "+
		"p(worse), p(>t worse): the one-sided Mann–Whitney U test of NEW worse than BASE made worse by the threshold t, the gate's test; a row regresses when it is ≤ %.2g "+
		"(alpha %v shared over %d tested gated rows, so noise alone fails the gate at most %v of the time). "+
		"An improvement needs the one-sided p(better) ≤ the same level. (benchstat's p is two-sided; it is in the JSON as p.) "+
		"Gated: %s; the other rows are reported only. Any violation in NEW fails.",
		r.RowAlpha, r.Alpha, r.Tested, r.Alpha, strings.Join(r.Gate, ", "))
}

// WriteMarkdown writes r as GitHub-flavoured markdown, meant to be posted as
// a pull-request comment: the verdict as a heading, the warnings as a quote,
// one table per group. It is safe for concurrent use with distinct writers.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var buf bytes.Buffer
	mark := "✅"
	if r.Failed() {
		mark = "❌"
	}
	fmt.Fprintf(&buf, "### %s lockbench compare: %s\n\n", mark, mdEscape(r.headline()))
	if l := r.labelsLine(); l != "" {
		fmt.Fprintf(&buf, "%s\n\n", mdEscape(l))
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&buf, "> ⚠️ %s\n", mdEscape(wn))
	}
	if len(r.Warnings) > 0 {
		buf.WriteString("\n")
	}
	for _, g := range r.Groups {
		fmt.Fprintf(&buf, "**%s** (BASE %d runs, NEW %d runs)\n\n", mdEscape(g.Name), g.BaseRuns, g.NewRuns)
		buf.WriteString("| metric | base | new | delta | p(worse) | n | verdict |\n|---|--:|--:|--:|--:|--:|---|\n")
		for i := range g.Rows {
			row := &g.Rows[i]
			verdict := mdEscape(row.verdictCell(false))
			if row.Verdict != VerdictPass && row.Verdict != VerdictImproved {
				verdict = "**" + verdict + "**"
			}
			fmt.Fprintf(&buf, "| %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(row.Label), mdEscape(row.cell(row.Base)),
				mdEscape(row.cell(row.New)), row.deltaCell(), row.pCell(), row.nCell(), verdict)
		}
		buf.WriteString("\n")
	}
	r.writeUnmatched(&buf, "-")
	fmt.Fprintf(&buf, "\n<sub>%s</sub>\n", mdEscape(r.footnote()))
	_, err := w.Write(buf.Bytes())
	return err
}

// mdEscape keeps text from breaking a table or turning into markup.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;").Replace(s)
}
