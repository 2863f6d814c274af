package main

import (
	"context"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
)

// startProvider starts spec with the provider --provider names: native redis-server processes,
// or Docker containers of image (whose error, with no engine, wraps docker.ErrNoDocker and
// says so). native says how nodes start (--auth, --tls): the docker provider takes its user
// and certificates too.
func startProvider(ctx context.Context, provider, image string, spec compose.Spec, native compose.NativeOptions) (compose.Topology, error) {
	if provider == providerDocker {
		opts := docker.Options{Image: image}
		if a := native.Auth; a != nil {
			opts.Auth = &docker.Auth{User: a.User, Password: a.Password}
		}
		if t := native.TLS; t != nil {
			opts.TLS = &docker.TLS{CertFile: t.CertFile, KeyFile: t.KeyFile, CAFile: t.CAFile}
		}
		opts.CPUs = native.CPUs.String() // --server-cpus, --pin: the nodes' cpuset
		topo, err := docker.Start(ctx, spec, opts)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return topo, nil
	}
	return compose.Start(ctx, spec, native)
}
