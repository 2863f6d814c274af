package thresholds

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// Failed counts the results that did not pass. It is safe for concurrent use.
func Failed(rs []Result) int {
	n := 0
	for i := range rs {
		if !rs[i].Pass() {
			n++
		}
	}
	return n
}

// WriteReport writes one line per threshold and outcome, failures marked FAIL, after a
// headline with the count that passed. It is safe for concurrent use with distinct writers.
func WriteReport(w io.Writer, rs []Result) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "\nthresholds: %d of %d passed\n", len(rs)-Failed(rs), len(rs))
	for i := range rs {
		r := &rs[i]
		if len(r.Outcomes) == 0 {
			fmt.Fprintf(&buf, "  FAIL  %s: matched no run (did the driver run, or was it skipped?)\n", r.Threshold.Expr)
			continue
		}
		for _, o := range r.Outcomes {
			mark := "ok  "
			if !o.Pass {
				mark = "FAIL"
			}
			fmt.Fprintf(&buf, "  %s  %s: %s %s", mark, r.Threshold.Expr, o.Subject, r.Threshold.format(o))
			if o.Note != "" {
				fmt.Fprintf(&buf, " (%s)", o.Note)
			}
			buf.WriteString("\n")
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// format renders an outcome's value: a ratio with an x, else in the metric's style.
func (t *Threshold) format(o Outcome) string {
	switch {
	case !o.Pass && o.Value == 0 && o.Note != "":
		return "-"
	case t.IsRatio():
		return strconv.FormatFloat(o.Value, 'f', 2, 64) + "x"
	}
	return t.Metric.Format(o.Value)
}
