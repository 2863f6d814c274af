package main

import (
	"context"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
)

// startProvider starts spec with the provider --provider names: native redis-server processes,
// or Docker containers (whose error, with no engine, wraps docker.ErrNoDocker and says so).
func startProvider(ctx context.Context, provider string, spec compose.Spec) (compose.Topology, error) {
	if provider == providerDocker {
		return docker.Start(ctx, spec)
	}
	return compose.Start(ctx, spec, compose.NativeOptions{})
}
