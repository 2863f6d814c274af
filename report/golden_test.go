package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/lockbench/lockbench/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// svgBody matches an inline chart; the golden file keeps the page around the charts (tables,
// captions, notes), which is ours, not the drawing, which is gonum's.
var svgBody = regexp.MustCompile(`(?s)<svg.*?</svg>`)

// TestPageGolden compares the page of a result file from an older run of this version (no
// timeline, topology or rounds) with testdata/old-run.golden.html; -update rewrites it.
func TestPageGolden(t *testing.T) {
	f, err := results.ReadFile("../cmd/lockbench/testdata/old-run.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build([]Source{{Name: "old-run.json", File: f}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	got := svgBody.ReplaceAll(page.Bytes(), []byte("<svg><!-- chart --></svg>"))
	golden := filepath.Join("testdata", "old-run.golden.html")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestPageGolden -update ./report writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("page differs from %s (go test -run TestPageGolden -update ./report after checking the change):\n%s", golden, got)
	}
}
