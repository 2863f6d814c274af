package generators

import (
	"context"

	"github.com/lockbench/lockbench/compose"
)

// StartStore starts a private redis-server on the host's address on network (its gateway),
// where the generators on that network reach it: the Redis they hand their results back
// through (collect), apart from the deployment under test. Close it when the run is over. It
// is safe for concurrent use.
func StartStore(ctx context.Context, network string) (*compose.Single, error) {
	cli, err := newClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	gw, err := gateway(ctx, cli, network)
	if err != nil {
		return nil, err
	}
	return compose.StartSingle(ctx, compose.NativeOptions{Host: gw})
}
