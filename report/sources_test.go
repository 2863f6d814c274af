package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

func TestSourceNames(t *testing.T) {
	t.Parallel()
	got := SourceNames([]string{"base/x.json", "new/x.json", "new/y.json"})
	if want := []string{"base/x.json", "new/x.json", "y.json"}; !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

// ReadSources names the files it read, and refuses one that is not a result; Write writes the
// page and the charts and returns their paths, the page first.
func TestReadSourcesAndWrite(t *testing.T) {
	t.Parallel()
	old := filepath.Join("..", "cmd", "lockbench", "testdata", "old-run.json")
	if _, err := ReadSources([]string{old, filepath.Join("..", "cmd", "lockbench", "testdata", "not-a-result.json")}); err == nil ||
		!strings.Contains(err.Error(), "not-a-result.json: bad result file") {
		t.Errorf("ReadSources with a file that is not a result: %v", err)
	}
	sources, err := ReadSources([]string{old})
	if err != nil {
		t.Fatal(err)
	}
	if len(sources) != 1 || sources[0].Name != "old-run.json" || sources[0].File == nil {
		t.Fatalf("sources = %+v", sources)
	}
	dir := t.TempDir()
	written, err := Write(dir, sources, Options{Title: "t"})
	if want := []string{filepath.Join(dir, HTMLName), filepath.Join(dir, "spectrum.png")}; err != nil || !slices.Equal(written, want) {
		t.Fatalf("Write = %q, %v; want %q", written, err, want)
	}
	page, err := os.ReadFile(written[0])
	if err != nil || !strings.Contains(string(page), "<title>t</title>") {
		t.Errorf("page: %v; want titled t", err)
	}
}

func TestShortLabels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		paths, want []string
	}{
		{[]string{"base/x.json", "new/x.json"}, []string{"base", "new"}},
		{[]string{"results/lockbench-20261123T110421Z-contention.json", "results/lockbench-20261123T120502Z-contention.json"},
			[]string{"20261123T110421Z", "20261123T120502Z"}},
		{[]string{"/tmp/run/v1.2/", "/tmp/run/v1.3"}, []string{"v1.2", "v1.3"}},
		{[]string{"results/lockbench-20261123T110421Z-contention.json"}, []string{"lockbench-20261123T110421Z-contention"}},
		{[]string{"a.json", "a.json"}, []string{"#1", "#2"}},
		{nil, []string{}},
	} {
		if got := ShortLabels(tc.paths); !slices.Equal(got, tc.want) {
			t.Errorf("ShortLabels(%q) = %q, want %q", tc.paths, got, tc.want)
		}
	}
}

func TestParseSpec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	odd := filepath.Join(dir, "a=b.json") // a file whose name has "=": a path, not a label
	if err := os.WriteFile(odd, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ arg, label, path string }{
		{"BASE=base/", "BASE", "base/"},
		{"v1.2=results/x.json", "v1.2", "results/x.json"},
		{"results/x.json", "", "results/x.json"},
		{"=x.json", "", "=x.json"},
		{"NEW=", "", "NEW="},
		{"a b=x.json", "", "a b=x.json"},
		{"../x=y/z.json", "", "../x=y/z.json"},
		{odd, "", odd},
	} {
		if label, path := ParseSpec(tc.arg); label != tc.label || path != tc.path {
			t.Errorf("ParseSpec(%q) = %q, %q; want %q, %q", tc.arg, label, path, tc.label, tc.path)
		}
	}
}

// ReadSpecs reads NAME=DIR as every result file in DIR, all labelled NAME, and labels an
// unlabelled file by what tells it apart.
func TestReadSpecs(t *testing.T) {
	t.Parallel()
	old := filepath.Join("..", "cmd", "lockbench", "testdata", "old-run.json")
	data, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, p := range []string{"base/1.json", "base/2.json", "new/1.json"} {
		path := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sources, err := ReadSpecs([]string{"BASE=" + filepath.Join(dir, "base"), filepath.Join(dir, "new", "1.json"), filepath.Join(dir, "base", "2.json")})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, s := range sources {
		labels = append(labels, s.Label)
	}
	if want := []string{"BASE", "BASE", "new-1", "base-2"}; !slices.Equal(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
	if _, err := ReadSpecs([]string{"EMPTY=" + t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no *.json") {
		t.Errorf("an empty directory: %v", err)
	}
	// Two labels: one set each, the runs of BASE's two files pooled into one group a driver.
	r, err := Build(sources[:3], Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range r.groups {
		if g.set == "BASE" && len(g.Runs) != 2*len(sources[0].File.Runs)/len(results.GroupRuns(sources[0].File.Runs)) {
			t.Errorf("%s: %d runs, want BASE's two files pooled", g.label, len(g.Runs))
		}
	}
}
