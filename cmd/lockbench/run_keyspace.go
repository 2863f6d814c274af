package main

import (
	"context"
	"errors"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
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

// checkAttached runs bench.CheckKeyspace for prefix before the first run on a deployment
// lockbench attached to (with --clean-existing), and sets file.Cleanup, which the cleanups
// fill. It returns what to say and the exit code, or "" to go on.
func (g *keyspaceFlags) checkAttached(ctx context.Context, t *target.Target, prefix string, file *results.File, ui *progressUI) (string, int) {
	cleanup, err := bench.CheckKeyspace(ctx, t, prefix, g.cleanExisting, ui)
	switch {
	case errors.Is(err, bench.ErrBadSpec):
		return err.Error(), exitUsage
	case err != nil:
		return err.Error(), exitFailure
	}
	if cleanup != nil {
		file.Cleanup = cleanup
	}
	return "", exitOK
}
