package main

import (
	"path/filepath"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

// runReport writes the report of lockbench run's results into dir (--report). It is run's
// (run.go calls it), apart from report.go so that lockbench report and run share no file.
func runReport(dir string, file *results.File, ui *progressUI) error {
	written, err := report.Write(dir, []report.Source{{File: file}}, report.Options{})
	if err != nil {
		return err
	}
	ui.line("report: %s (and %d PNG charts)", filepath.Join(dir, report.HTMLName), len(written)-1)
	return nil
}
