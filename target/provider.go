package target

import (
	"context"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
)

// Start starts spec with provider: native redis-server processes (ProviderNative, or ""), or
// Docker containers of image (ProviderDocker; its error, with no engine, wraps
// docker.ErrNoDocker and says so). native says how nodes start: the docker provider takes its
// user, certificates and CPUs too. It is what Open does to start a topology, for a caller that
// keeps it running without connecting to it (lockbench up).
func Start(ctx context.Context, provider, image string, spec compose.Spec, native compose.NativeOptions) (compose.Topology, error) {
	if provider == ProviderDocker {
		opts := docker.Options{Image: image}
		if a := native.Auth; a != nil {
			opts.Auth = &docker.Auth{User: a.User, Password: a.Password}
		}
		if t := native.TLS; t != nil {
			opts.TLS = &docker.TLS{CertFile: t.CertFile, KeyFile: t.KeyFile, CAFile: t.CAFile}
		}
		opts.CPUs = native.CPUs.String() // the nodes' cpuset
		topo, err := docker.Start(ctx, spec, opts)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return topo, nil
	}
	return compose.Start(ctx, spec, native)
}
