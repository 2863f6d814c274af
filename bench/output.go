package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
)

// WriteSummary writes the human summary of runs to w, as lockbench run prints it: the table
// (medians over rounds, ratios to baseline), then the checkers, the protected resource,
// fairness, faults and what failed. An error names the part that could not be written; the
// others are written still.
func WriteSummary(w io.Writer, runs []results.Run, baseline string) error {
	parts := []struct {
		name  string
		write func() error
	}{
		{"summary", func() error { return results.WriteSummaryBaseline(w, runs, baseline) }},
		{"checkers", func() error { return results.WriteCheckers(w, runs) }},
		{"resource", func() error { return results.WriteResource(w, runs) }},
		{"fairness", func() error { return results.WriteFairness(w, runs) }},
		{"faults", func() error { return results.WriteFaults(w, runs) }},
		{"failed", func() error { return results.WriteFailed(w, runs) }},
	}
	var errs []error
	for _, p := range parts {
		if err := p.write(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
		}
	}
	return errors.Join(errs...)
}

// WriteFiles writes file into dir: the JSON result file, beside it the benchstat lines
// (.bench.txt), and per run an HdrHistogram percentile file and interval log (.hgrm, .hlog). It
// says on rep where each went.
func WriteFiles(dir string, file *results.File, rep Reporter) error {
	path, err := results.WriteFile(dir, file)
	if err != nil {
		return err
	}
	rep.Line("results: %s", path)
	base := strings.TrimSuffix(path, filepath.Ext(path))
	bench, err := os.Create(base + ".bench.txt")
	if err != nil {
		return err
	}
	if err := results.WriteBenchfmt(bench, file.Runs); err != nil {
		bench.Close()
		return err
	}
	if err := bench.Close(); err != nil {
		return err
	}
	rep.Line("benchstat lines: %s", bench.Name())
	hdr, err := results.ExportHDR(path, "", file)
	if err != nil {
		return err
	}
	if len(hdr) > 0 {
		rep.Line("HDR percentiles and 1 s interval logs: %s", base+"-*.hgrm, -*.hlog")
	}
	return nil
}

// Outputs are where a session's results are written once its runs are done (lockbench run's
// and sweep's --out, --no-results and --report). The zero value writes nothing.
type Outputs struct {
	// Dir is the directory of the result files (WriteFiles); "" writes none.
	Dir string
	// Report is the directory of the HTML page and PNG charts (package report); "" draws none.
	Report string
}

// Write writes file's outputs, when file holds anything (a run or a skip), and says on rep
// where each went. The error names the output that could not be written ("writing results: …",
// "report: …"); the report is not drawn when the result files could not be written.
func (o Outputs) Write(file *results.File, rep Reporter) error {
	if len(file.Runs) == 0 && len(file.Skipped) == 0 {
		return nil
	}
	if o.Dir != "" {
		if err := WriteFiles(o.Dir, file, rep); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
	}
	if o.Report != "" {
		written, err := report.Write(o.Report, []report.Source{{File: file}}, report.Options{})
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		rep.Line("report: %s (and %d PNG charts)", filepath.Join(o.Report, report.HTMLName), len(written)-1)
	}
	return nil
}

// Describe records in file what a session runs against (Redis's version, the topology, the
// deployment's settings as the preflight read them, for concurrency workers) and, on a
// deployment lockbench attached to, says on rep what in it makes locks unsafe: the private
// servers lockbench starts are not for keeping locks.
func Describe(ctx context.Context, tgt *target.Target, file *results.File, concurrency int, rep Reporter) {
	file.RedisVersion = tgt.RedisVersion(ctx)
	file.Topology = tgt.Info()
	file.Deployment = tgt.Deployment(ctx, concurrency)
	if tgt.Attached() && file.Deployment != nil {
		for _, w := range file.Deployment.Warnings {
			rep.Line("warning: %s", w)
		}
	}
}
