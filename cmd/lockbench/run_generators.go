package main

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/generators"
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

// check returns what is wrong with the group's own flags, or "". What --generators docker
// cannot be combined with is the run's to say (checkDockerGenerators), before checkImage.
func (g *generatorFlags) check(fs *pflag.FlagSet) string {
	switch {
	case g.kind != generatorsProcess && g.kind != generatorsDocker:
		return fmt.Sprintf("--generators %q: want process or docker", g.kind)
	case !g.docker() && (fs.Changed("generator-image") || fs.Changed("generator-cpus")):
		return "--generator-image and --generator-cpus are for --generators docker"
	}
	return ""
}

// checkImage checks --generator-image and, unless flagsOnly, asks the engine whether it
// answers and has the image, so that neither is found missing after the servers started. It
// returns what is wrong, or "".
func (g *generatorFlags) checkImage(flagsOnly bool) string {
	if err := checkImageRef(g.image); err != nil {
		return "--generator-image: " + err.Error()
	}
	if flagsOnly {
		// parseOnly reaches no engine: whether the image is there is the run's to find out,
		// and checked documentation must not depend on which images this machine holds.
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := generators.CheckImage(ctx, g.image); err != nil {
		return "--generators docker: " + err.Error()
	}
	return ""
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

// startNetwork creates the generators' own network (see generatorFlags.network) and returns a
// func that removes it. announce says where the servers bind (lockbench starts them natively).
func (g *generatorFlags) startNetwork(ctx context.Context, announce bool, ui *progressUI) (func(), error) {
	if !g.docker() {
		return func() {}, nil
	}
	n, err := generators.NewNetwork(ctx, generators.NewRunID())
	if err != nil {
		return func() {}, err
	}
	g.network = &n
	if announce {
		ui.line("generators' network %s: the servers bind on its gateway %s", n.Name, n.Gateway)
	}
	return func() {
		if err := generators.RemoveNetwork(context.Background(), n.ID); err != nil {
			ui.line("warning: %v", err)
		}
	}, nil
}
