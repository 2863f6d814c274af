package results

import (
	"strings"
	"testing"
	"time"
)

// TestFileMergerLabels checks what a merged file's label is: the one every file carries, or
// none with a warning naming the labels when they differ; Relabel settles it.
func TestFileMergerLabels(t *testing.T) {
	start := time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)
	merge := func(labels ...string) *File {
		t.Helper()
		g := NewFileMerger("test", nil)
		for i, l := range labels {
			f := NewFile("test", nil)
			f.Label = l
			f.Runs = []Run{processRun(t, i, len(labels), start, time.Millisecond, 5)}
			if err := g.Add(f); err != nil {
				t.Fatal(err)
			}
		}
		m, err := g.File()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	warnings := func(f *File) []string { return f.Runs[0].Fleet.Warnings }
	for _, c := range []struct {
		name   string
		labels []string
		want   string // the merged file's label
		warn   string // in the warning; "" for none
	}{
		{"all alike", []string{"v1.3", "v1.3", "v1.3"}, "v1.3", ""},
		{"none", []string{"", ""}, "", ""},
		{"two labels", []string{"v1.2", "v1.3", "v1.2"}, "", "(v1.2 in 2 results, v1.3 in 1 result)"},
		{"one unlabelled", []string{"BASE", ""}, "", "(BASE in 1 result, none in 1 result)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := merge(c.labels...)
			if m.Label != c.want {
				t.Errorf("label %q, want %q", m.Label, c.want)
			}
			w := warnings(m)
			switch {
			case c.warn == "" && len(w) > 0:
				t.Errorf("warnings %q, want none", w)
			case c.warn != "" && (len(w) != 1 || !strings.Contains(w[0], c.warn) || !strings.Contains(w[0], "--label NAME")):
				t.Errorf("warnings %q, want one naming %s and --label", w, c.warn)
			}
			m.Relabel("NEW")
			if m.Label != "NEW" || len(warnings(m)) != 0 {
				t.Errorf("relabelled: label %q warnings %q, want NEW and none", m.Label, warnings(m))
			}
		})
	}
}

// TestFileMergerLabelOfSkips keeps the label of files that only skipped.
func TestFileMergerLabelOfSkips(t *testing.T) {
	g := NewFileMerger("test", nil)
	for range 2 {
		f := NewFile("test", nil)
		f.Label = "v1.3"
		f.Skipped = []Skip{{Driver: "redsync", Reason: "no fair lock"}}
		if err := g.Add(f); err != nil {
			t.Fatal(err)
		}
	}
	m, err := g.File()
	if err != nil {
		t.Fatal(err)
	}
	if m.Label != "v1.3" {
		t.Errorf("label %q, want v1.3", m.Label)
	}
}
