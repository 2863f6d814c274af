package generators

import (
	"context"
	"fmt"
	"os"
	"strconv"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// Network is a bridge network of one run's generators. Its gateway is the host's own address
// on the bridge: servers this machine runs natively bind there, so the generators reach them
// through their own network namespace, as a host reaches a server over a LAN, and nothing else
// can (the gateway is not routed beyond the engine's bridge).
type Network struct {
	// ID and Name identify the network on the engine.
	ID, Name string
	// Gateway is the host's IP address on it.
	Gateway string
}

// labels are the labels of everything a run of generators creates: compose/docker's, so that
// docker.Reap removes what a killed lockbench left, and the run's id.
func labels(runID string) map[string]string {
	return map[string]string{docker.LabelOwner: "1", docker.LabelPID: strconv.Itoa(os.Getpid()), docker.LabelTopology: runID}
}

// dockerClient is the engine client compose/docker uses.
type dockerClient = testcontainers.DockerClient

// newClient returns a client of the engine compose/docker uses (DOCKER_HOST, or its discovery).
func newClient(ctx context.Context) (*dockerClient, error) {
	if err := docker.Available(ctx); err != nil {
		return nil, err
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", docker.ErrNoDocker, err)
	}
	return cli, nil
}

// NewNetwork creates a bridge network named lockbench-gen-<runID>, labelled like the
// generators, and returns it with its gateway. Remove it with RemoveNetwork. It is safe for
// concurrent use.
func NewNetwork(ctx context.Context, runID string) (Network, error) {
	cli, err := newClient(ctx)
	if err != nil {
		return Network{}, err
	}
	defer cli.Close()
	name := "lockbench-gen-" + runID
	res, err := cli.NetworkCreate(ctx, name, client.NetworkCreateOptions{Driver: "bridge", Labels: labels(runID)})
	if err != nil {
		return Network{}, fmt.Errorf("generators: create network %s: %w", name, err)
	}
	n := Network{ID: res.ID, Name: name}
	in, err := cli.NetworkInspect(ctx, res.ID, client.NetworkInspectOptions{})
	if err == nil {
		for _, c := range in.Network.IPAM.Config {
			if c.Gateway.Is4() {
				n.Gateway = c.Gateway.String()
				break
			}
		}
	}
	if n.Gateway == "" {
		RemoveNetwork(context.WithoutCancel(ctx), n.ID)
		return Network{}, fmt.Errorf("generators: network %s has no IPv4 gateway (inspect: %v)", name, err)
	}
	return n, nil
}

// RemoveNetwork removes network id; gone already is no error. It is safe for concurrent use.
func RemoveNetwork(ctx context.Context, id string) error {
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.NetworkRemove(ctx, id, client.NetworkRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("generators: remove network %s: %w", id, err)
	}
	return nil
}

// CheckImage returns nil when a Docker engine answers and has image; else an error wrapping
// docker.ErrNoDocker or ErrNoImage that says what to do. It is safe for concurrent use.
func CheckImage(ctx context.Context, image string) error {
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, image); err != nil {
		if cerrdefs.IsNotFound(err) {
			return fmt.Errorf("%w: %s (build it from this checkout with 'lockbench image build lockbench')", ErrNoImage, image)
		}
		return fmt.Errorf("inspect %s: %w", image, err)
	}
	return nil
}

// StartStore starts a private redis-server on the host's address on network (its gateway),
// where the generators on that network reach it: the Redis they hand their results back
// through (collect), apart from the deployment under test. Close it when the run is over. It
// is safe for concurrent use.
func StartStore(ctx context.Context, network string) (*compose.Single, error) {
	cli, err := newClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	in, err := cli.NetworkInspect(ctx, network, client.NetworkInspectOptions{})
	if err != nil {
		return nil, fmt.Errorf("generators: inspect network %s: %w", network, err)
	}
	gw := ""
	for _, c := range in.Network.IPAM.Config {
		if c.Gateway.Is4() {
			gw = c.Gateway.String()
			break
		}
	}
	if gw == "" {
		return nil, fmt.Errorf("generators: network %s has no IPv4 gateway for the results' Redis", network)
	}
	return compose.StartSingle(ctx, compose.NativeOptions{Host: gw})
}
