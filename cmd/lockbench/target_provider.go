package main

import (
	"context"
	"errors"

	"github.com/lockbench/lockbench/compose"
)

// errNoDocker is returned for --provider docker until the docker provider is built in.
var errNoDocker = errors.New("--provider docker is not available in this build")

// startProvider starts spec with the provider --provider names.
func startProvider(ctx context.Context, provider string, spec compose.Spec) (compose.Topology, error) {
	if provider == providerDocker {
		return nil, errNoDocker
	}
	return compose.Start(ctx, spec, compose.NativeOptions{})
}
