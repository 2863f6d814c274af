package results

import (
	"errors"
	"fmt"
)

// ErrNoRuns is wrapped by ReadRunFiles's error for a result file with no runs.
var ErrNoRuns = errors.New("no runs")

// ErrNothingToExport is wrapped by Export's error for a result file none of whose runs
// measured anything.
var ErrNothingToExport = errors.New("no run measured anything: nothing to export")

// ReadRunFiles reads the result files at paths (ReadFile) and refuses one with no runs
// (ErrNoRuns, after its path), so that a caller that writes something for each file can read
// them all first and write nothing for bad input.
func ReadRunFiles(paths []string) ([]*File, error) {
	files := make([]*File, len(paths))
	for i, path := range paths {
		f, err := ReadFile(path)
		if err != nil {
			return nil, err
		}
		if len(f.Runs) == 0 {
			return nil, fmt.Errorf("%s: %w", path, ErrNoRuns)
		}
		files[i] = f
	}
	return files, nil
}

// Export is ExportHDR for a file given to be exported: one none of whose runs measured
// anything is an error, after its path, that wraps ErrNothingToExport.
func Export(resultPath, dir string, f *File) ([]HDRFiles, error) {
	written, err := ExportHDR(resultPath, dir, f)
	if err == nil && len(written) == 0 {
		err = fmt.Errorf("%s: %w", resultPath, ErrNothingToExport)
	}
	return written, err
}
