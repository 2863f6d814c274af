package docker

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/compose"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/testcontainers/testcontainers-go/wait"
)

// clusterMasters and clusterReplicasPerMaster shape the cluster: three masters, the minimum
// Redis Cluster accepts, each with one replica so that failover can be exercised.
const (
	clusterMasters           = 3
	clusterReplicasPerMaster = 1
)

// startCluster starts six host-network nodes with cluster mode on, joins them with redis-cli
// --cluster create (run inside the first node's container, which has redis-cli), and waits
// until every node reports cluster_state:ok.
func (t *Topology) startCluster(ctx context.Context) error {
	n := clusterMasters * (1 + clusterReplicasPerMaster)
	// The bus ports are picked too, not left to port+10000: Redis refuses a cluster port past
	// 55535, about a fifth of Linux's default ephemeral range.
	ports, err := freePorts(2 * n)
	if err != nil {
		return err
	}
	addrs := make([]string, n)
	var first testcontainers.Container
	for i, port := range ports[:n] {
		addrs[i] = loopbackAddr(port)
		p := strconv.Itoa(port)
		cmd, opts := t.sec.server(port, true,
			"--bind", loopback.String(),
			"--cluster-enabled", "yes",
			"--cluster-port", strconv.Itoa(ports[n+i]),
			"--cluster-config-file", "nodes-"+p+".conf",
			"--cluster-node-timeout", "5000")
		c, err := t.runHost(ctx, wait.ForLog("Ready to accept connections"), cmd, opts...)
		if err != nil {
			return fmt.Errorf("node %s: %w", addrs[i], err)
		}
		if i == 0 {
			first = c
		}
	}

	create := append([]string{"--cluster", "create"}, addrs...)
	create = t.sec.redisCLI(append(create, "--cluster-replicas", strconv.Itoa(clusterReplicasPerMaster), "--cluster-yes")...)
	code, out, err := first.Exec(ctx, create, tcexec.Multiplexed())
	if err != nil {
		return fmt.Errorf("redis-cli --cluster create: %w", err)
	}
	if code != 0 {
		b, _ := io.ReadAll(out)
		return fmt.Errorf("redis-cli --cluster create exited %d: %s", code, strings.TrimSpace(string(b)))
	}

	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	err = poll(ctx, "cluster state", func(ctx context.Context) error {
		return t.probe.allReport(ctx, addrs, "cluster_state", "ok", "CLUSTER", "INFO")
	})
	if err != nil {
		return fmt.Errorf("%w; %s", err, hostNetworkHint)
	}
	// redis-cli decides which nodes become replicas; ask each node what it is.
	var replicas []string
	for _, a := range addrs {
		info, err := t.probe.command(ctx, a, "INFO", "replication")
		if err != nil {
			return err
		}
		role := compose.RoleMaster
		if infoField(info, "role") == "slave" {
			role = compose.RoleReplica
		}
		t.desc.Nodes = append(t.desc.Nodes, compose.Node{Addr: a, Role: role})
		if role == compose.RoleReplica {
			replicas = append(replicas, a)
		}
	}
	if err := poll(ctx, "replicas to sync", func(ctx context.Context) error {
		return t.probe.replicasInSync(ctx, replicas)
	}); err != nil {
		return err
	}
	t.addrs = addrs
	t.desc.Kind = compose.KindCluster
	return nil
}
