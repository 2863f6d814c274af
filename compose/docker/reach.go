package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/compose"
	"github.com/moby/moby/client"
)

// ErrHostNetwork is wrapped by Reach's error for a topology on the host's network (cluster):
// containers with their own network namespace cannot dial its loopback addresses.
var ErrHostNetwork = errors.New("the topology runs on the host's network")

// Reach says how a container with its own network namespace, on network (a name), reaches the
// topology: the other networks it must join and the addresses it dials, in the order of Addrs.
// single's and masters:N's servers are connected to network and reached there at Redis's own
// port (not the port published on the host's loopback); sentinel's clients already dial the
// sentinels' container addresses, on the topology's two networks, which a container must both
// join, since the sentinels announce the master by its address on one of them. cluster runs on
// the host's network: its error wraps ErrHostNetwork. It is safe for concurrent use.
func (t *Topology) Reach(ctx context.Context, network string) (join, addrs []string, err error) {
	switch t.kind {
	case compose.KindSentinel:
		return slices.Clone(t.nets), t.Addrs(), nil
	case compose.KindCluster:
		return nil, nil, ErrHostNetwork
	}
	t.mu.Lock()
	cs := slices.Clone(t.containers)
	t.mu.Unlock()
	cli, err := newClient(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer cli.Close()
	for _, c := range cs {
		ip, err := containerIP(ctx, c, network)
		if err != nil { // not connected yet: Reach is called once per run of generators
			if _, err := cli.NetworkConnect(ctx, network, client.NetworkConnectOptions{Container: c.GetContainerID()}); err != nil {
				return nil, nil, fmt.Errorf("connect %s to network %s: %w", c.GetContainerID()[:12], network, err)
			}
			ip, err = containerIP(ctx, c, network)
		}
		if err != nil {
			return nil, nil, err
		}
		addrs = append(addrs, net.JoinHostPort(ip, strings.TrimSuffix(redisPort, "/tcp")))
	}
	return nil, addrs, nil
}
