package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
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

// check returns what is wrong with the generator flags, or "". For docker it asks the engine
// whether it answers and has the image (not for parseOnly, which reaches nothing), so that
// neither is found missing after the servers started.
func (g *generatorFlags) check(fs *pflag.FlagSet, f *runFlags) string {
	switch {
	case g.kind != generatorsProcess && g.kind != generatorsDocker:
		return fmt.Sprintf("--generators %q: want process or docker", g.kind)
	case !g.docker() && (fs.Changed("generator-image") || fs.Changed("generator-cpus")):
		return "--generator-image and --generator-cpus are for --generators docker"
	case !g.docker():
		return ""
	case f.provider == providerDocker && f.spec.Kind == compose.KindCluster:
		return "--generators docker cannot reach --provider docker's cluster: its nodes run on the host's network, on loopback; use the native provider (its servers then bind on the generators' network)"
	case f.conn.startSecure:
		return "--generators docker with --auth or --tls is not supported: the certificates and password files lockbench makes are on this host, which the containers cannot read"
	case f.net.cond != nil:
		return "--net is not available with --generators docker: its proxies listen on this host's loopback, which the containers cannot reach"
	case f.cpuprof != "" || f.tracefile != "":
		return "--cpuprofile and --trace are not available with --generators docker: the profiles would stay in the removed containers"
	case f.metrics.addr != "":
		return "--metrics-addr is not available with --generators docker: the generators' endpoints would be inside their containers"
	}
	for _, a := range f.conn.child {
		if strings.HasPrefix(a, "--tls") {
			return "--generators docker with TLS files (" + strings.SplitN(a, "=", 2)[0] + ") is not supported: they are on this host, which the containers cannot read"
		}
	}
	if f.referee.addr == "" {
		// Containers share no memory: without the referee, nothing checks mutual exclusion
		// across them.
		f.referee.addr = refereeNative
	}
	switch {
	case f.referee.addr != refereeNative && bench.OnLoopback(f.referee.addr):
		return fmt.Sprintf("--referee %s is on this host's loopback, which the generator containers cannot reach: give an address they can reach, or --referee native", f.referee.addr)
	case f.collect.addr != "" && bench.OnLoopback(f.collect.addr):
		return fmt.Sprintf("--collect %s is on this host's loopback, which the generator containers cannot reach: give an address they can reach, or leave it out (lockbench then starts one they reach)", f.collect.addr)
	}
	for _, a := range f.addrs {
		if bench.OnLoopback(a) {
			return fmt.Sprintf("--addr %s is on this host's loopback, which a generator container (its own network namespace) cannot reach: give an address the containers can reach, or let lockbench start the servers", a)
		}
	}
	if err := checkImageRef(g.image); err != nil {
		return "--generator-image: " + err.Error()
	}
	if f.flagsOnly {
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
// func that removes it.
func (g *generatorFlags) startNetwork(ctx context.Context, f *runFlags, ui *progressUI) (func(), error) {
	if !g.docker() {
		return func() {}, nil
	}
	n, err := generators.NewNetwork(ctx, generators.NewRunID())
	if err != nil {
		return func() {}, err
	}
	g.network = &n
	if len(f.addrs) == 0 && f.provider == providerNative {
		ui.line("generators' network %s: the servers bind on its gateway %s", n.Name, n.Gateway)
	}
	return func() {
		if err := generators.RemoveNetwork(context.Background(), n.ID); err != nil {
			ui.line("warning: %v", err)
		}
	}, nil
}
