package main

import (
	"fmt"

	"github.com/lockbench/lockbench/results"
	"github.com/spf13/pflag"
)

// labelFlag is --label (run and sweep): the name the result file carries (results.File.Label),
// which compare shows for each side and a report draws the file's runs under.
type labelFlag struct {
	name string
}

// add registers --label for cmd: run and sweep write the files people compare; a worker's file
// is a share of a run, labelled by the run that merges it.
func (g *labelFlag) add(fs *pflag.FlagSet, cmd string) {
	if cmd != cmdRun && cmd != cmdSweep {
		return
	}
	fs.StringVar(&g.name, "label", "", "a name for this invocation's result file, e.g. BASE, NEW, v1.3 or pr-481 (letters, digits, . _ + -): lockbench compare shows each side's, lockbench report draws the file's runs under it")
}

// check returns what is wrong with the label, or nil.
func (g *labelFlag) check() error {
	if g.name == "" {
		return nil
	}
	if err := results.CheckLabel(g.name); err != nil {
		return fmt.Errorf("--%w", err)
	}
	return nil
}
