package generators

import (
	"context"
	"fmt"
	"os"
	"strconv"

	cerrdefs "github.com/containerd/errdefs"
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
	n.Gateway, err = gateway(ctx, cli, res.ID)
	if err != nil {
		RemoveNetwork(context.WithoutCancel(ctx), n.ID)
		return Network{}, err
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

// gateway returns the IPv4 gateway of network: the host's address on it. The engine's default
// bridge has none in its configuration, which is why the generators get a network of their own.
func gateway(ctx context.Context, cli *dockerClient, network string) (string, error) {
	in, err := cli.NetworkInspect(ctx, network, client.NetworkInspectOptions{})
	if err != nil {
		return "", fmt.Errorf("generators: inspect network %s: %w", network, err)
	}
	for _, c := range in.Network.IPAM.Config {
		if c.Gateway.Is4() {
			return c.Gateway.String(), nil
		}
	}
	return "", fmt.Errorf("generators: network %s has no IPv4 gateway", network)
}
