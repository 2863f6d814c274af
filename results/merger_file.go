package results

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// FileMerger merges the result files of the generator processes of one run (lockbench worker)
// one at a time into one file, as lockbench run --procs writes it: one merged run (see Merger),
// the first file's topology and Redis version, complete only when every file and the merged run
// are. The files' skips are kept when they ran nothing, and their label (File.Label) when they
// all carry the same one; files labelled differently (or some not at all) give a file with no
// label and a warning in the merged run's Fleet.Warnings that names the labels (see Relabel).
// A file is not kept once added, so a
// caller that reads one file, adds it and drops it merges any number of files in the memory of
// one. A FileMerger is not safe for concurrent use.
type FileMerger struct {
	out    *File
	runs   *Merger
	files  int
	skips  []Skip
	anyRun bool
	// labels counts the files of each label ("" for none), in the order they first came.
	labels []labelCount
}

// labelCount is how many files carried one label.
type labelCount struct {
	label string
	files int
}

// NewFileMerger returns a FileMerger whose file is stamped with version and the command line
// args (see NewFile).
func NewFileMerger(version string, args []string) *FileMerger {
	return &FileMerger{out: NewFile(version, args), runs: NewMerger()}
}

// Add merges f. A file that holds more than one run, or a run that is not a share of the same
// run as the others' (see Merger.Add), gives an error wrapping ErrFleetMismatch. A run that
// does not record the lockbench version its process ran is taken to have run the file's.
func (g *FileMerger) Add(f *File) error {
	g.files++
	if len(f.Runs) > 1 {
		return fmt.Errorf("%w: file %d has %d runs; a worker's file has one", ErrFleetMismatch, g.files, len(f.Runs))
	}
	if g.files == 1 {
		g.out.Topology, g.out.RedisVersion = f.Topology, f.RedisVersion
	}
	if g.out.RedisVersion == "" {
		g.out.RedisVersion = f.RedisVersion
	}
	g.out.Complete = g.out.Complete && f.Complete
	g.countLabel(f.Label)
	g.skips = append(g.skips, f.Skipped...)
	for i := range f.Runs {
		r := f.Runs[i] // a copy: the version filled in below stays out of f
		if r.Fleet != nil && len(r.Fleet.Processes) == 1 && r.Fleet.Processes[0].Version == "" {
			fl := *r.Fleet
			fl.Processes = []ProcessResult{fl.Processes[0]}
			fl.Processes[0].Version = f.Version
			r.Fleet = &fl
		}
		if err := g.runs.Add(&r); err != nil {
			return err
		}
		g.anyRun = true
	}
	return nil
}

// Files returns how many files have been added.
func (g *FileMerger) Files() int { return g.files }

// File returns the merged file. With no file, or files with neither runs nor skips, it
// returns an error wrapping ErrFleetMismatch.
func (g *FileMerger) File() (*File, error) {
	if g.files == 0 {
		return nil, fmt.Errorf("%w: no files", ErrFleetMismatch)
	}
	out := *g.out
	if len(g.labels) == 1 {
		out.Label = g.labels[0].label
	}
	if !g.anyRun {
		if len(g.skips) == 0 {
			return nil, fmt.Errorf("%w: no runs in the files", ErrFleetMismatch)
		}
		out.Skipped = g.skips
		return &out, nil
	}
	run, err := g.runs.Run()
	if err != nil {
		return nil, err
	}
	if w := g.labelWarning(); w != "" && run.Fleet != nil {
		run.Fleet.Warnings = append(run.Fleet.Warnings, w)
	}
	out.Runs = []Run{run}
	out.Complete = out.Complete && run.Complete
	return &out, nil
}

// countLabel counts one more file labelled label.
func (g *FileMerger) countLabel(label string) {
	for i := range g.labels {
		if g.labels[i].label == label {
			g.labels[i].files++
			return
		}
	}
	g.labels = append(g.labels, labelCount{label, 1})
}

// labelWarningText starts the warning of files labelled differently, so that Relabel knows it.
const labelWarningText = "the results carry different labels"

// labelWarning says which labels the files carried when they differ, else "". A label is a
// name for people (lockbench run --label), not part of the run's configuration, so files
// labelled differently still merge; the merged file keeps none rather than pick one.
func (g *FileMerger) labelWarning() string {
	if len(g.labels) < 2 {
		return ""
	}
	var parts []string
	for _, l := range g.labels {
		name := l.label
		if name == "" {
			name = "none"
		}
		word := "results"
		if l.files == 1 {
			word = "result"
		}
		parts = append(parts, fmt.Sprintf("%s in %d %s", name, l.files, word))
	}
	return labelWarningText + " (" + strings.Join(parts, ", ") + "): the merged file has none; lockbench merge --label NAME gives it one"
}

// Relabel sets f's label to label (CheckLabel must accept it; "" removes it) and drops the
// warning of a merge whose files were labelled differently (see FileMerger), which the label
// given settles: what lockbench merge --label does. It is not safe for concurrent use.
func (f *File) Relabel(label string) {
	f.Label = label
	for i := range f.Runs {
		fl := f.Runs[i].Fleet
		if fl == nil {
			continue
		}
		fl.Warnings = slices.DeleteFunc(slices.Clone(fl.Warnings), func(w string) bool {
			return strings.HasPrefix(w, labelWarningText)
		})
		if len(fl.Warnings) == 0 {
			fl.Warnings = nil
		}
	}
}

// AddFiles reads the result files at paths one at a time and adds each (Add): memory holds one
// file however many there are. The error names the file a mismatch was found in.
func (g *FileMerger) AddFiles(paths []string) error {
	for _, path := range paths {
		f, err := ReadFile(path)
		if err != nil {
			return err
		}
		if err := g.Add(f); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// MismatchText is err in lockbench merge's words: an error wrapping ErrFleetMismatch says the
// results are not the processes of one run, and why; any other is its text.
func MismatchText(err error) string {
	msg := err.Error()
	if errors.Is(err, ErrFleetMismatch) {
		msg = strings.Replace(msg, ErrFleetMismatch.Error()+": ", "", 1)
		msg = "the results are not the processes of one run: " + msg
	}
	return msg
}

// WriteMerged writes the tables of a merged file's runs to w, as lockbench merge prints them:
// the summary, the checkers, the protected resource and fairness. The error joins those that
// could not be written, each named ("summary: …").
func WriteMerged(w io.Writer, merged *File) error {
	if len(merged.Runs) == 0 {
		return nil
	}
	var errs []error
	for _, t := range []struct {
		name  string
		write func(io.Writer, []Run) error
	}{{"summary", WriteSummary}, {"checkers", WriteCheckers}, {"resource", WriteResource}, {"fairness", WriteFairness}} {
		if err := t.write(w, merged.Runs); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.name, err))
		}
	}
	return errors.Join(errs...)
}

// Processes returns how many processes' results the runs of f merge (Fleet.Processes).
func (f *File) Processes() int {
	n := 0
	for _, r := range f.Runs {
		if r.Fleet != nil {
			n += len(r.Fleet.Processes)
		}
	}
	return n
}
