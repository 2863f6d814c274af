package report_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

// Build a report of a result file and write the page and PNGs into a directory.
func Example() {
	f, err := results.ReadFile("../cmd/lockbench/testdata/old-run.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "report-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	rep, err := report.Build([]report.Source{{Name: "old-run.json", File: f}}, report.Options{Title: "lockcore against naive"})
	if err != nil {
		fmt.Println(err)
		return
	}
	written, err := rep.WriteFiles(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, path := range written {
		fmt.Println(filepath.Base(path))
	}
	// Output:
	// index.html
	// spectrum.png
}
