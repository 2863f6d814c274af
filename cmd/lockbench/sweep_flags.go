package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/sweep"
	"github.com/spf13/pflag"
)

// parseSweepFlags reads lockbench sweep's command line: run's flags and checks, then the
// sweep's own (sweep.Flags), whose --threshold gates on the knees.
func parseSweepFlags(args []string, stdout, stderr io.Writer) (*runFlags, *sweep.Flags, int, bool) {
	s := &sweep.Flags{}
	add := func(fs *pflag.FlagSet) {
		s.Register(fs)
		if fl := fs.Lookup("threshold"); fl != nil {
			fl.Usage = "capacity gate, repeatable: on a driver's knee (the highest load within the SLO) or the server-bound capacity projected there, absolute ('lockcore knee>=20000', 'capacity>=50000') or a ratio of two drivers ('lockcore/naive knee>=2'); a driver without a knee fails it; a failed one exits " + strconv.Itoa(exitThresholds)
		}
	}
	check := func(fs *pflag.FlagSet, f *runFlags) error {
		if err := s.Check(fs, f.sweepRun()); err != nil {
			return err
		}
		f.cfg.Arrival = s.Arrival // held back from run's checks (sweep.Flags.Register); Check checked it
		return checkOut(f)
	}
	f, code, ok := parseCommandFlags(commandFlags{name: cmdSweep, examples: sweepExamples, add: add, check: check}, args, stdout, stderr)
	return f, s, code, ok
}

// sweepRun is what a sweep takes of run's flags.
func (f *runFlags) sweepRun() sweep.RunSettings {
	return sweep.RunSettings{Drivers: f.drivers, Thresholds: f.kneeExprs, Warmup: f.cfg.Warmup, Duration: f.cfg.Duration}
}

// checkOut makes sure the results can be written to --out before minutes are spent measuring;
// with --no-results, or for parseOnly (flagsOnly), there is nothing to check.
func checkOut(f *runFlags) error {
	if f.noResults || f.flagsOnly {
		return nil
	}
	if err := results.CheckDir(f.out); err != nil {
		return fmt.Errorf("--out %s: %v", f.out, err)
	}
	return nil
}
