package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// Labels on every container and network Start creates. lockbench removes what it started
// itself (Close, and Reap for what a killed process left), instead of testcontainers' reaper
// (Ryuk), whose image cannot be pulled where there is no registry.
const (
	// LabelOwner marks lockbench's resources; its value is "1".
	LabelOwner = "lockbench.docker"
	// LabelPID is the process id of the lockbench (or test binary) that started the resource.
	LabelPID = "lockbench.pid"
	// LabelTopology is the id of one started topology, shared by all its resources.
	LabelTopology = "lockbench.topology"
)

func init() {
	// Ryuk is testcontainers' safety net for containers a dead process leaves behind; its
	// image comes from Docker Hub, so with no registry every start would fail pulling it.
	// testcontainers reads this once, at its first use; a user's explicit setting wins.
	if _, set := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !set {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	// testcontainers prints an engine banner to stderr on first contact; lockbench's stderr
	// is its own progress and errors, which carry what matters.
	tclog.SetDefault(tclog.NewNoopLogger())
}

// newClient returns a client of the engine testcontainers uses (DOCKER_HOST, or its discovery).
func newClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoDocker, err)
	}
	return cli, nil
}

// Resources lists the ids of containers (running or not) and networks carrying label
// (key=value, or just key), as the engine reports them. Tests use it to check that nothing
// was left behind. It is safe for concurrent use.
func Resources(ctx context.Context, label string) (containers, networks []string, err error) {
	cli, err := newClient(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer cli.Close()
	f := make(client.Filters).Add("label", label)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cs.Items {
		containers = append(containers, c.ID)
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, nil, err
	}
	for _, n := range ns.Items {
		networks = append(networks, n.ID)
	}
	return containers, networks, nil
}

// removeLabelled force-removes the containers, then the networks, carrying label. Resources
// already gone are not errors.
func removeLabelled(ctx context.Context, label string) error {
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	return removeLabelledWith(ctx, cli, label, func(map[string]string) bool { return true })
}

func removeLabelledWith(ctx context.Context, cli *testcontainers.DockerClient, label string, match func(labels map[string]string) bool) error {
	f := make(client.Filters).Add("label", label)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range cs.Items {
		if !match(c.Labels) {
			continue
		}
		_, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, n := range ns.Items {
		if !match(n.Labels) {
			continue
		}
		if err := removeNetwork(ctx, cli, n.ID); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// networkDetachWait bounds how long removeNetwork waits for the engine to let go of the
// endpoints of containers just removed.
const networkDetachWait = 5 * time.Second

// removeNetwork removes network id; gone already is no error. Right after its containers were
// force-removed, the engine (20.10 here) may still count their endpoints for a moment and
// refuse with "has active endpoints" (seen once in CI); that refusal is retried for up to
// networkDetachWait.
func removeNetwork(ctx context.Context, cli *testcontainers.DockerClient, id string) error {
	deadline := time.Now().Add(networkDetachWait)
	for {
		_, err := cli.NetworkRemove(ctx, id, client.NetworkRemoveOptions{})
		switch {
		case err == nil || cerrdefs.IsNotFound(err):
			return nil
		case !strings.Contains(err.Error(), "active endpoints") || time.Now().After(deadline):
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Reap removes the containers and networks lockbench started from processes that no longer
// run (killed before they could Close), on this machine's engine. Start calls it, so a
// killed run's leftovers go with the next start; resources of live processes are not
// touched. It is safe for concurrent use.
func Reap(ctx context.Context) error {
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	return removeLabelledWith(ctx, cli, LabelOwner, func(labels map[string]string) bool {
		pid, err := strconv.Atoi(labels[LabelPID])
		return err == nil && pid > 0 && !processAlive(pid)
	})
}
