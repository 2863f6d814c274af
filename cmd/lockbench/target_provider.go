package main

import (
	"context"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
)

// startProvider starts spec with the provider --provider names: native redis-server processes,
// or Docker containers of image (whose error, with no engine, wraps docker.ErrNoDocker and
// says so).
func startProvider(ctx context.Context, provider, image string, spec compose.Spec) (compose.Topology, error) {
	if provider == providerDocker {
		topo, err := docker.Start(ctx, spec, docker.Options{Image: image})
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return topo, nil
	}
	return compose.Start(ctx, spec, compose.NativeOptions{})
}
