package main

import (
	"github.com/lockbench/lockbench/extdriver"
	"github.com/spf13/pflag"
)

// execFlags is run's --exec-null: the null adapter's row beside external (exec:) drivers.
type execFlags struct {
	null bool
}

// add registers the group's flags for cmd (run only).
func (g *execFlags) add(fs *pflag.FlagSet, cmd string) {
	if cmd == cmdRun {
		fs.BoolVar(&g.null, "exec-null", true, "with exec: drivers, also run the null adapter (exec:null, built into lockbench) beside them: the protocol's own cost, which the summary sets their latencies against (docs/external-drivers.md)")
	}
}

// drivers returns run's drivers with the null row added when external drivers run
// (extdriver.WithNull), unless --exec-null=false.
func (g *execFlags) drivers(cmd string, specs []string) []string {
	if cmd != cmdRun || !g.null {
		return specs
	}
	return extdriver.WithNull(specs)
}
