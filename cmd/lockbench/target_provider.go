package main

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
)

// startProvider starts spec with the provider --provider names: native redis-server processes,
// or Docker containers of image (whose error, with no engine, wraps docker.ErrNoDocker and
// says so). native says how native nodes start (--auth, --tls); the docker provider does not
// take it yet.
func startProvider(ctx context.Context, provider, image string, spec compose.Spec, native compose.NativeOptions) (compose.Topology, error) {
	if provider == providerDocker {
		if native.Auth != nil || native.TLS != nil {
			return nil, fmt.Errorf("%w: --auth and --tls are for --provider native; the docker provider starts nodes without them", compose.ErrBadSpec)
		}
		topo, err := docker.Start(ctx, spec, docker.Options{Image: image, CPUs: native.CPUs.String()})
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return topo, nil
	}
	return compose.Start(ctx, spec, native)
}
