package docker

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/compose"
)

// ErrHostNetwork is wrapped by Reach's error for a topology on the host's network (cluster):
// containers with their own network namespace cannot dial its loopback addresses.
var ErrHostNetwork = errors.New("the topology runs on the host's network")

// Reach says how a container with its own network namespace reaches the topology: the networks
// it must join and the addresses it dials there, in the order of Addrs. single and masters:N
// are on the engine's default bridge, reached at each container's address and Redis's own
// port (not the port published on the host's loopback); sentinel's clients already dial the
// sentinels' container addresses, on the topology's two networks, which a container must both
// join, since the sentinels announce the master by its address on one of them. cluster runs on
// the host's network: its error wraps ErrHostNetwork. It is safe for concurrent use.
func (t *Topology) Reach(ctx context.Context) (networks, addrs []string, err error) {
	switch t.kind {
	case compose.KindSentinel:
		return slices.Clone(t.nets), t.Addrs(), nil
	case compose.KindCluster:
		return nil, nil, ErrHostNetwork
	}
	t.mu.Lock()
	cs := slices.Clone(t.containers)
	t.mu.Unlock()
	for _, c := range cs {
		ip, err := containerIP(ctx, c, "bridge")
		if err != nil {
			return nil, nil, err
		}
		addrs = append(addrs, net.JoinHostPort(ip, strings.TrimSuffix(redisPort, "/tcp")))
	}
	return []string{"bridge"}, addrs, nil
}
