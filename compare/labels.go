package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/results"
)

// fileLabels returns the labels files carry (results.File.Label), each once, in file order.
func fileLabels(files []*results.File) []string {
	var out []string
	for _, f := range files {
		if f.Label != "" && !slices.Contains(out, f.Label) {
			out = append(out, f.Label)
		}
	}
	return out
}

// labelsLine says what each side is, by the labels its files carry: "labels: BASE v1.2, NEW
// v1.3"; "" when no file has a label, so that unlabelled output is as it was.
func (r *Report) labelsLine() string {
	if len(r.BaseLabels) == 0 && len(r.NewLabels) == 0 {
		return ""
	}
	side := func(labels []string) string {
		if len(labels) == 0 {
			return "(no label)"
		}
		return strings.Join(labels, " + ")
	}
	return fmt.Sprintf("labels: BASE %s, NEW %s", side(r.BaseLabels), side(r.NewLabels))
}

// labelWarnings names what the labels suggest is a mistake: a side whose files carry several
// labels (their runs pool into one sample, as if one build), or the same labels on both sides
// (the same files, or the same build, given twice?). Files without labels say nothing.
func labelWarnings(base, new []*results.File) []string {
	var out []string
	b, n := fileLabels(base), fileLabels(new)
	for _, side := range []struct {
		name   string
		labels []string
	}{{"BASE", b}, {"NEW", n}} {
		if len(side.labels) > 1 {
			out = append(out, fmt.Sprintf("%s pools files of %d labels (%s) into one sample", side.name, len(side.labels), strings.Join(side.labels, ", ")))
		}
	}
	if len(b) > 0 && slices.Equal(b, n) {
		out = append(out, fmt.Sprintf("BASE and NEW carry the same label %s: are these the files meant?", strings.Join(b, " + ")))
	}
	return out
}
