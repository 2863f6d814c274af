package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/generators"
	"github.com/lockbench/lockbench/progress"
	"github.com/spf13/pflag"
)

// Where run's generator processes run (--generators).
const (
	generatorsProcess = "process"
	generatorsDocker  = "docker"
)

// generatorFlags are run's --generators, --generator-image and --generator-cpus.
type generatorFlags struct {
	kind  string
	image string
	cpus  string

	// network is the generators' own bridge, made by runCommand before the topology starts:
	// native servers bind on its gateway, the docker provider's are connected to it, and the
	// Redis the generators hand their results to listens on its gateway.
	network *generators.Network
}

func (g *generatorFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&g.kind, "generators", generatorsProcess, "where the --procs generator processes run: process (child processes of this one, sharing a safety checker in memory) or docker (each a container of --generator-image with its own network namespace and file system: separate hosts on one machine)")
	fs.StringVar(&g.image, "generator-image", generators.LocalImage, "lockbench image the --generators docker containers run ('lockbench image build lockbench' makes "+generators.LocalImage+")")
	fs.StringVar(&g.cpus, "generator-cpus", "", "with --generators docker: pin every generator container to these CPUs, a cpuset (0, 0-1, 0,2)")
}

func (g *generatorFlags) docker() bool { return g.kind == generatorsDocker }

// check returns what is wrong with the group's own flags, or nil. What --generators docker
// cannot be combined with is bench.DockerCheck's, and the image bench.CheckGeneratorImage's.
func (g *generatorFlags) check(fs *pflag.FlagSet) error {
	switch {
	case g.kind != generatorsProcess && g.kind != generatorsDocker:
		return fmt.Errorf("--generators %q: want process or docker", g.kind)
	case !g.docker() && (fs.Changed("generator-image") || fs.Changed("generator-cpus")):
		return errors.New("--generator-image and --generator-cpus are for --generators docker")
	}
	return nil
}

// nativeHost is where servers lockbench starts for the run bind (the topology, a native
// referee): the generators' network gateway with --generators docker, so that the containers
// reach them; "" (loopback) otherwise.
func (g *generatorFlags) nativeHost() string {
	if g.network == nil {
		return ""
	}
	return g.network.Gateway
}

// startNetwork creates the generators' own network (see generatorFlags.network) with
// bench.StartGeneratorNetwork and returns a func that removes it. announce says where the
// servers bind (lockbench starts them natively).
func (g *generatorFlags) startNetwork(ctx context.Context, announce bool, ui *progress.UI) (func(), error) {
	if !g.docker() {
		return func() {}, nil
	}
	n, remove, err := bench.StartGeneratorNetwork(ctx, announce, ui)
	g.network = n
	return remove, err
}
