package main

import (
	"github.com/spf13/pflag"
)

// keyspaceFlags is --clean-existing (run and sweep): whether keys of lockbench's shapes found on
// an attached deployment before the first run may be deleted.
type keyspaceFlags struct {
	cleanExisting bool
}

// add registers the group's flags for cmd: run and sweep clean an attached deployment; a
// worker (lockbench worker, the processes of --procs) never does.
func (g *keyspaceFlags) add(fs *pflag.FlagSet, cmd string) {
	if cmd != cmdRun && cmd != cmdSweep {
		return
	}
	fs.BoolVar(&g.cleanExisting, "clean-existing", false, "with --addr: delete the keys of lockbench's own shapes for --key-prefix found before the first run "+
		"(another run's, or a crashed one's); without it lockbench names them, leaves them alone and does not start (exit 2)")
}
