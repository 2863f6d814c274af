package bench

import (
	"context"

	"github.com/lockbench/lockbench/results"
)

// run makes one run of rm's driver with the fleet and returns the merged run.
func (r *remote) run(ctx context.Context, rm *Remote) (results.Run, error) {
	r.runs++
	if r.f.Docker != nil {
		return r.runContainers(ctx, rm)
	}
	return r.runProcs(ctx, rm)
}
