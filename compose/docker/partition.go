package docker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/moby/moby/client"
)

// ErrNoPartition is wrapped by Partition's error when the topology cannot cut that node off:
// only sentinel's first master has a network of its own. Check it with errors.Is.
var ErrNoPartition = errors.New("docker: this node cannot be partitioned")

// partitionTimeout bounds the network changes of one Partition or Heal.
const partitionTimeout = 30 * time.Second

// Partition cuts the node at addr off from every other node of the topology with docker
// network disconnect, while clients on this machine still reach it at addr: a real network
// partition, which killing or pausing a node cannot imitate. A cut-off sentinel master keeps
// serving the clients that reach it while the sentinels, which no longer do, promote a
// replica: two masters accept writes, and locks granted on the old one are lost.
//
// It is supported for the sentinel topology's first master (addr as Describe gave it), whose
// address is on a network Partition leaves to it alone; other nodes get an error wrapping
// ErrNoPartition.
// Heal undoes it. Partition is safe for concurrent use.
func (t *Topology) Partition(ctx context.Context, addr string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.masterNet == "" || len(t.desc.Nodes) == 0 || t.desc.Nodes[0].Addr != addr {
		return fmt.Errorf("%w: %s (only the sentinel topology's first master, %s)", ErrNoPartition, addr, t.firstMaster())
	}
	return t.eachPeer(ctx, func(cli *client.Client, id string, master bool) error {
		net := t.masterNet
		if master {
			net = t.peersNet
		}
		_, err := cli.NetworkDisconnect(ctx, net, client.NetworkDisconnectOptions{Container: id, Force: true})
		return err
	})
}

// Heal reconnects the nodes Partition disconnected, so the old master can rejoin (the
// sentinels then make it a replica of the promoted one). It is safe for concurrent use.
func (t *Topology) Heal(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.masterNet == "" {
		return fmt.Errorf("%w: the %s topology has no partition to heal", ErrNoPartition, t.kind)
	}
	return t.eachPeer(ctx, func(cli *client.Client, id string, master bool) error {
		net := t.masterNet
		if master {
			net = t.peersNet
		}
		_, err := cli.NetworkConnect(ctx, net, client.NetworkConnectOptions{Container: id})
		return err
	})
}

// eachPeer calls fn for the first master's container (master true: its peers network leg)
// and every other container (their master network leg), with t.mu held.
func (t *Topology) eachPeer(ctx context.Context, fn func(cli *client.Client, id string, master bool) error) error {
	ctx, cancel := context.WithTimeout(ctx, partitionTimeout)
	defer cancel()
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	master := t.byAddr[t.desc.Nodes[0].Addr]
	var errs []error
	for _, n := range t.desc.Nodes {
		c := t.byAddr[n.Addr]
		if c == nil {
			continue
		}
		if err := fn(cli.Client, c.GetContainerID(), c == master); err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", n.Addr, n.Role, err))
		}
	}
	return errors.Join(errs...)
}

func (t *Topology) firstMaster() string {
	if t.kind != compose.KindSentinel || len(t.desc.Nodes) == 0 {
		return "none in a " + t.kind + " topology"
	}
	return t.desc.Nodes[0].Addr
}
