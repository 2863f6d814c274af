package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/progress"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
)

// prepare is what run and sweep (cmd) do before they measure: start or attach to the
// deployment f names, so that a second signal (in) stops a topology it started; check, before
// anything runs, the faults an attached deployment can take, the ACL of --key-prefix and keys
// of lockbench's shapes already there; and begin the result file. On an exit code other than
// exitOK it has said why and closed what it opened; otherwise the caller closes the target.
func prepare(ctx context.Context, cmd string, f *runFlags, in *interrupter, ui *progress.UI, stderr io.Writer) (*runTarget, *results.File, int) {
	tgt, err := startTopology(ctx, f, ui, func(t compose.Topology) { in.onHardStop(func() { t.Close() }) })
	if err != nil {
		fmt.Fprintf(stderr, "lockbench %s: %v\n", cmd, err)
		switch {
		case ctx.Err() != nil:
			return nil, nil, exitInterrupted
		case errors.Is(err, target.ErrBadSpec), cmd == cmdSweep && f.deploy.Attached():
			// Nothing was run: --addr does not fit --topology, or refuses the credentials or
			// TLS; for sweep also an --addr that does not answer (its documented exit 2).
			return nil, nil, exitUsage
		}
		return nil, nil, exitFailure
	}
	fail := func(msg string, code int) (*runTarget, *results.File, int) {
		fmt.Fprintf(stderr, "lockbench %s: %s\n", cmd, msg)
		tgt.close()
		return nil, nil, code
	}
	cleanup, err := bench.CheckAttached(ctx, tgt.Target, f.faultCheck(), f.cfg.KeyPrefix, f.drivers, f.keyspace.cleanExisting, ui)
	switch {
	case errors.Is(err, bench.ErrBadSpec):
		return fail(err.Error(), exitUsage) // nothing was measured or deleted
	case errors.Is(err, extdriver.ErrHello) && f.gens.docker():
		return fail(err.Error()+" (with --generators docker too, lockbench reads each exec adapter's hello on this machine before the containers run: its command must run here, as the same library --generator-image holds)", exitFailure)
	case err != nil:
		return fail(err.Error(), exitFailure)
	}
	file := results.NewFile(version, conn.RedactArgs(os.Args))
	if cleanup != nil {
		file.Cleanup = cleanup
	}
	file.Placement = f.pin.Placement
	file.Label = f.label.name
	return tgt, file, exitOK
}
