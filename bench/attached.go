package bench

import (
	"context"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
)

// CheckAttached runs, before anything is measured or deleted, the checks of a deployment t
// lockbench attached to that need it to answer: the faults it can take (faults.CheckAttached),
// whether the user may use the keys of prefix (KeyAccess, its warnings shown on rep), and the
// keys of lockbench's shapes already there (CheckKeyspace, with cleanExisting). It returns the
// record the cleanups fill (results.File.Cleanup); nil, and no error, on a topology lockbench
// started. Refusals wrap ErrBadSpec; any other error is a failure to look.
func CheckAttached(ctx context.Context, t *target.Target, faults FaultCheck, prefix string, cleanExisting bool, rep Reporter) (*results.Cleanup, error) {
	if err := faults.CheckAttached(t); err != nil {
		return nil, err
	}
	if !t.Attached() {
		return nil, nil // a topology lockbench started grants everything, and is flushed
	}
	warn, err := KeyAccess(ctx, t, prefix)
	if err != nil {
		return nil, err
	}
	for _, w := range warn {
		rep.Line("warning: %s", w)
	}
	return CheckKeyspace(ctx, t, prefix, cleanExisting, rep)
}
