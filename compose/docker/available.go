package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// ErrNoDocker is wrapped by the errors of Available and Start when no Docker engine answers. It
// is a value, safe to share between goroutines; check it with errors.Is.
var ErrNoDocker = errors.New("no Docker engine reachable")

// AvailableTimeout bounds Available, so that a hung engine is reported in seconds. A missing
// engine (no socket, a refused connection) is reported at once; the bound is for an engine that
// accepts and is slow to answer, which a busy one is: under CI's parallel tests an engine took
// more than 3 s to answer 'docker info'.
const AvailableTimeout = 10 * time.Second

// discoveryBound bounds testcontainers' engine discovery, which Available runs apart from its
// caller's deadline (see pingDiscovered).
const discoveryBound = 2 * time.Minute

// Available reports whether a Docker engine answers, within AvailableTimeout or ctx's deadline,
// whichever comes first. With DOCKER_HOST set it asks exactly that engine, since that is the
// one the user chose; otherwise it uses testcontainers' discovery (~/.testcontainers.properties,
// the default socket, rootless sockets). Its error wraps ErrNoDocker and the cause, and says to
// use the native provider. Available is safe for concurrent use.
func Available(ctx context.Context) error {
	return AvailableWithin(ctx, AvailableTimeout)
}

// AvailableWithin is Available with a bound of its caller's: tests, which start containers
// beside each other on a busy machine, wait longer for an engine they know is there.
func AvailableWithin(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	where := "DOCKER_HOST=" + os.Getenv("DOCKER_HOST")
	var err error
	if os.Getenv("DOCKER_HOST") != "" {
		err = pingEnv(ctx)
	} else {
		where = "DOCKER_HOST unset; tried /var/run/docker.sock, rootless sockets and ~/.testcontainers.properties"
		err = pingDiscovered(ctx)
	}
	if err != nil {
		return fmt.Errorf("%w (%s: %w): use the native provider, the default", ErrNoDocker, where, err)
	}
	return nil
}

// pingEnv pings the engine that DOCKER_HOST (and DOCKER_TLS_VERIFY, DOCKER_CERT_PATH) name.
func pingEnv(ctx context.Context) error {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.Ping(ctx, client.PingOptions{})
	return err
}

// pingDiscovered pings the engine testcontainers would use. testcontainers keeps its discovery's
// outcome for the life of the process, a failure included, and every container start asks it
// again: a discovery cut short by a short deadline while the engine was busy would leave the
// process without an engine for good (CI at 24a9510: one slow 'docker info', then fourteen
// tests failing in e2e, each at once). So the discovery runs under a bound of its own,
// discoveryBound, and ctx bounds only the wait for it: a later call finds what it concluded.
func pingDiscovered(ctx context.Context) error {
	type found struct {
		cli *testcontainers.DockerClient
		err error
	}
	done := make(chan found, 1)
	go func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), discoveryBound)
		defer cancel()
		cli, err := testcontainers.NewDockerClientWithOpts(dctx)
		done <- found{cli, err}
	}()
	var f found
	select {
	case f = <-done:
	case <-ctx.Done():
		go func() { // close the client of a discovery that finishes after the wait
			if f := <-done; f.err == nil {
				f.cli.Close()
			}
		}()
		return fmt.Errorf("the engine did not answer: %w", ctx.Err())
	}
	if f.err != nil {
		return f.err
	}
	defer f.cli.Close()
	_, err := f.cli.Ping(ctx, client.PingOptions{})
	return err
}
