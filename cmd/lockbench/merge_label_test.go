package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestMergeKeepsLabels checks lockbench merge's label: the one its results share is kept;
// results labelled differently merge into a file with none and a warning naming them;
// --label names the merged file whatever they carry, and a bad --label exits 2.
func TestMergeKeepsLabels(t *testing.T) {
	for _, c := range []struct {
		name   string
		labels []string
		args   []string
		want   string
		warn   string // on stderr; "" for no warning
	}{
		{"shared", []string{"v1.3", "v1.3"}, nil, "v1.3", ""},
		{"different", []string{"v1.2", "v1.3"}, nil, "", "warning: lockcore: the results carry different labels (v1.2 in 1 result, v1.3 in 1 result)"},
		{"different, --label", []string{"v1.2", "v1.3"}, []string{"--label", "NEW"}, "NEW", ""},
		{"none, --label", []string{"", ""}, []string{"--label", "pr-481"}, "pr-481", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			paths, _ := workerResults(t, len(c.labels))
			for i, p := range paths {
				f, err := results.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				f.Label = c.labels[i]
				if err := results.WriteFileAt(p, f); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(t.TempDir(), "merged.json")
			var stdout, stderr bytes.Buffer
			args := append(append([]string{"merge", "-o", out}, c.args...), paths...)
			if code := dispatch(args, &stdout, &stderr); code != exitOK {
				t.Fatalf("merge: exit %d\n%s", code, stderr.String())
			}
			m, err := results.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if m.Label != c.want {
				t.Errorf("merged label %q, want %q", m.Label, c.want)
			}
			if got := strings.Contains(stderr.String(), "different labels"); got != (c.warn != "") || !strings.Contains(stderr.String(), c.warn) {
				t.Errorf("stderr:\n%s\nwant the warning %q", stderr.String(), c.warn)
			}
		})
	}
	paths, _ := workerResults(t, 1)
	var stdout, stderr bytes.Buffer
	code := dispatch([]string{"merge", "-o", filepath.Join(t.TempDir(), "m.json"), "--label", "v 1", paths[0]}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), `--label "v 1"`) {
		t.Errorf("--label 'v 1': exit %d\n%s\nwant 2 naming the label", code, stderr.String())
	}
}
