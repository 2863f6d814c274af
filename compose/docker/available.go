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

// AvailableTimeout bounds Available, so that a missing or hung engine is reported in seconds.
const AvailableTimeout = 3 * time.Second

// Available reports whether a Docker engine answers, within AvailableTimeout or ctx's deadline,
// whichever comes first. With DOCKER_HOST set it asks exactly that engine, since that is the
// one the user chose; otherwise it uses testcontainers' discovery (~/.testcontainers.properties,
// the default socket, rootless sockets). Its error wraps ErrNoDocker and the cause, and says to
// use the native provider. Available is safe for concurrent use.
func Available(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, AvailableTimeout)
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

// pingDiscovered pings the engine testcontainers would use. Its discovery checks each candidate
// with the ctx given, so the whole search is bounded by it.
func pingDiscovered(ctx context.Context) error {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.Ping(ctx, client.PingOptions{})
	return err
}
