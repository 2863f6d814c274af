package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
