package report

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestFileLabelIsTheDefault: a file's own label (run --label) names its set when the command
// line gives it none, a NAME=PATH overrides it, and the page's configuration names it.
func TestFileLabelIsTheDefault(t *testing.T) {
	t.Parallel()
	f, err := results.ReadFile(filepath.Join("..", "cmd", "lockbench", "testdata", "old-run.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f.Label = "v1.3"
	labelledPath, err := results.WriteFile(filepath.Join(dir, "a"), f)
	if err != nil {
		t.Fatal(err)
	}
	f.Label = ""
	plainPath, err := results.WriteFile(filepath.Join(dir, "b"), f)
	if err != nil {
		t.Fatal(err)
	}

	sources, err := ReadSpecs([]string{labelledPath, plainPath, "NEW=" + labelledPath})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, s := range sources {
		labels = append(labels, s.Label)
	}
	if want := []string{"v1.3", "b", "NEW"}; !slices.Equal(labels, want) {
		t.Errorf("labels %q, want %q: the file's own, the path's, the command line's", labels, want)
	}

	// Sources built by a caller (run --report) without a Label: the file's, the caller's
	// slice left as it was.
	given := []Source{{Name: "x.json", File: sources[0].File}, {Name: "y.json", File: sources[1].File}}
	if got := defaultLabels(given); !slices.Equal(got, []string{"v1.3", "y"}) {
		t.Errorf("default labels %q, want [v1.3 y]", got)
	}
	if given[0].Label != "" {
		t.Errorf("defaultLabels changed its argument: %q", given[0].Label)
	}

	found := false
	for _, r := range configRows(sources[0]) {
		if r.Key == "label" && slices.Equal(r.Lines, []string{"v1.3"}) {
			found = true
		}
	}
	if !found {
		t.Errorf("configuration rows %+v: no label v1.3", configRows(sources[0]))
	}
}
