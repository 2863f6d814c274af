package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/generators"
)

const imageExamples = `
Examples:
  # Build lockbench/redis:local from this machine's redis-server (no registry needed):
  lockbench image build

  # Build lockbench/lockbench:local, the generators' image, from this checkout (needs Go):
  lockbench image build lockbench
  docker run --rm lockbench/lockbench:local version

  # Then run on Docker with it:
  lockbench run --provider docker --image lockbench/redis:local --topology sentinel
  LOCKBENCH_REDIS_IMAGE=lockbench/redis:local docker compose -f compose/single.yml up -d --wait

The Redis image is FROM scratch: redis-server, redis-cli, sh, sleep and grep from this machine with
the shared libraries they load, labelled with a hash of that content. When an image of the
tag already has that content, nothing is built. It runs as root and is meant for tests and
benchmarks on this machine, not for production.
The lockbench image is FROM scratch too: a static lockbench binary (CGO_ENABLED=0) built from
the checkout (--src, default the one holding the working directory), run as user 65532; the
Dockerfile at the top of the checkout builds the same image where base images can be pulled.
The tag is printed on stdout; build output goes to stderr.
Exit codes: 0 built or up to date, 1 the build failed (no Docker engine, no redis-server), 2 bad flags.
`

// The images lockbench image build makes.
const (
	imageRedis     = "redis"
	imageLockbench = "lockbench"
)

// imageFlags are the parsed flags of lockbench image build.
type imageFlags struct {
	which string // imageRedis or imageLockbench
	tag   string
	src   string
	force bool
	quiet bool
}

func parseImageFlags(args []string, stdout, stderr io.Writer) (*imageFlags, int, bool) {
	f := &imageFlags{}
	fs := newCmdFlagSet("image", stderr)
	fs.StringVar(&f.tag, "tag", "", "tag of the image to build (default "+docker.LocalImage+", or "+generators.LocalImage+")")
	fs.StringVar(&f.src, "src", "", "lockbench image: the checkout to build (default: the one holding the working directory)")
	fs.BoolVar(&f.force, "force", false, "build even when the image is up to date")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not copy the builder's output to stderr")

	bad := func(format string, a ...any) (*imageFlags, int, bool) { return nil, fs.bad(format, a...), false }
	if code, done := fs.parse(args, stdout, "Usage: lockbench image build [redis|lockbench] [flags]\n\nBuild a Redis image from this machine's redis-server, for --provider docker and compose/*.yml\n(redis, the default), or the lockbench image the generators of --generators docker run (lockbench).", imageExamples); done {
		return nil, code, false
	}
	switch {
	case fs.NArg() == 0:
		return bad("missing subcommand: want 'lockbench image build'")
	case fs.Arg(0) != "build":
		return bad("unknown subcommand %q: want build", fs.Arg(0))
	case fs.NArg() > 2:
		return bad("unexpected argument %q", fs.Arg(2))
	}
	f.which = imageRedis
	if fs.NArg() == 2 {
		f.which = fs.Arg(1)
	}
	switch {
	case f.which != imageRedis && f.which != imageLockbench:
		return bad("unknown image %q: want redis or lockbench", f.which)
	case f.src != "" && f.which != imageLockbench:
		return bad("--src is for 'lockbench image build lockbench'")
	case f.tag == "" && f.which == imageLockbench:
		f.tag = generators.LocalImage
	case f.tag == "":
		f.tag = docker.LocalImage
	}
	if err := docker.CheckImageRef(f.tag); err != nil {
		return bad("--tag: %v", err)
	}
	return f, exitOK, true
}

func imageCommand(args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseImageFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var log io.Writer = stderr
	if f.quiet {
		log = nil
	}
	var res docker.BuildResult
	var err error
	if f.which == imageLockbench {
		res, err = generators.BuildImage(ctx, generators.BuildOptions{Tag: f.tag, Src: f.src, Force: f.force, Log: log})
	} else {
		res, err = docker.BuildImage(ctx, docker.BuildOptions{Tag: f.tag, Force: f.force, Log: log})
	}
	if err != nil {
		fmt.Fprintf(stderr, "lockbench image build: %v\n", err)
		if ctx.Err() != nil && !errors.Is(err, docker.ErrNoDocker) {
			return exitInterrupted
		}
		return exitFailure
	}
	if res.Built {
		fmt.Fprintf(stderr, "lockbench image build: built %s (%s, content %s)\n", res.Tag, res.ID, res.Content)
	} else {
		fmt.Fprintf(stderr, "lockbench image build: %s is up to date (%s, content %s)\n", res.Tag, res.ID, res.Content)
	}
	fmt.Fprintln(stdout, res.Tag)
	return exitOK
}
