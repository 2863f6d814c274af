package results

import "fmt"

// FileMerger merges the result files of the generator processes of one run (lockbench worker)
// one at a time into one file, as lockbench run --procs writes it: one merged run (see Merger),
// the first file's topology and Redis version, complete only when every file and the merged run
// are. The files' skips are kept when they ran nothing. A file is not kept once added, so a
// caller that reads one file, adds it and drops it merges any number of files in the memory of
// one. A FileMerger is not safe for concurrent use.
type FileMerger struct {
	out    *File
	runs   *Merger
	files  int
	skips  []Skip
	anyRun bool
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
	out.Runs = []Run{run}
	out.Complete = out.Complete && run.Complete
	return &out, nil
}
