package bench

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/generators"
)

// CheckGeneratorImage checks the reference of the lockbench image generator containers run
// (Docker.Image) and, unless offline, asks the engine whether it answers and has the image, so
// that neither is found missing after the servers started. offline is for checking command
// lines (lockbench's parseOnly): whether the image is there is then the run's to find out. The
// error wraps ErrBadSpec and names lockbench run's --generator-image or --generators.
func CheckGeneratorImage(image string, offline bool) error {
	if err := docker.CheckImageRef(image); err != nil {
		return &badSpec{msg: "--generator-image: " + err.Error(), cause: err}
	}
	if offline {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := generators.CheckImage(ctx, image); err != nil {
		return &badSpec{msg: "--generators docker: " + err.Error(), cause: err}
	}
	return nil
}

// StartGeneratorNetwork creates the generator containers' own network (Docker.Network), before
// the topology starts: native servers bind on its gateway, the docker provider's are connected
// to it. announce says on rep where the servers bind (lockbench starts them natively). It
// returns the network and a func that removes it, warning on rep if it cannot.
func StartGeneratorNetwork(ctx context.Context, announce bool, rep Reporter) (*generators.Network, func(), error) {
	n, err := generators.NewNetwork(ctx, generators.NewRunID())
	if err != nil {
		return nil, func() {}, err
	}
	if announce {
		rep.Line("generators' network %s: the servers bind on its gateway %s", n.Name, n.Gateway)
	}
	return &n, func() {
		if err := generators.RemoveNetwork(context.Background(), n.ID); err != nil {
			rep.Line("warning: %v", err)
		}
	}, nil
}
