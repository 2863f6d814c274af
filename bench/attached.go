package bench

import (
	"context"

	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
)

// CheckAttached runs, before anything is measured or deleted, the checks of a deployment t
// lockbench attached to that need it to answer: the faults it can take (faults.CheckAttached);
// the keys the external adapters among specs declare, from their hellos (each adapter started
// and ended once, extdriver.DeclaredKeys: a hello comes only from a running adapter, and the
// keyspace must be looked at with them); whether the user may use the keys of prefix
// (KeyAccess, its warnings shown on rep); and the keys of lockbench's shapes and the declared
// ones already there (CheckKeyspace, with cleanExisting). It returns the record the cleanups
// fill (results.File.Cleanup, the declared patterns in it); nil, and no error, on a topology
// lockbench started. Refusals wrap ErrBadSpec; any other error is a failure to look.
func CheckAttached(ctx context.Context, t *target.Target, faults FaultCheck, prefix string, specs []string, cleanExisting bool, rep Reporter) (*results.Cleanup, error) {
	if err := faults.CheckAttached(t); err != nil {
		return nil, err
	}
	if !t.Attached() {
		return nil, nil // a topology lockbench started grants everything, and is flushed
	}
	declared, err := extdriver.DeclaredKeys(ctx, specs, t.DriverConfig(0))
	if err != nil {
		return nil, err
	}
	for _, d := range declared {
		rep.Line("keys declared by an adapter: %s (found, cleaned and audited with lockbench's own for --key-prefix %q)", d.Pattern, prefix)
	}
	warn, err := KeyAccess(ctx, t, prefix, declared...)
	if err != nil {
		return nil, err
	}
	for _, w := range warn {
		rep.Line("warning: %s", w)
	}
	return CheckKeyspace(ctx, t, prefix, cleanExisting, rep, declared...)
}
