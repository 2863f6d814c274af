package docker

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/compose"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// sentinelReplicas and sentinelCount shape the sentinel topology: a master, two replicas and
// three sentinels with quorum two, the smallest deployment that survives losing any one node.
const (
	sentinelReplicas = 2
	sentinelCount    = 3
	sentinelQuorum   = 2
)

// startSentinel starts a master, its replicas and the sentinels, all on the host's network,
// and waits until every sentinel sees the master as ok with all replicas and all other
// sentinels: only then does a failover test have a deployment that can fail over.
func (t *Topology) startSentinel(ctx context.Context, masterName string) error {
	ports, err := freePorts(1 + sentinelReplicas + sentinelCount)
	if err != nil {
		return err
	}
	master := loopbackAddr(ports[0])
	for i, port := range ports[:1+sentinelReplicas] {
		cmd := append([]string{"redis-server", "--port", strconv.Itoa(port), "--bind", loopback.String()}, serverArgs...)
		role := compose.RoleMaster
		if i > 0 {
			cmd = append(cmd, "--replicaof", loopback.String(), strconv.Itoa(ports[0]))
			role = compose.RoleReplica
		}
		addr := loopbackAddr(port)
		if _, err := t.runHost(ctx, wait.ForLog("Ready to accept connections"), cmd); err != nil {
			return fmt.Errorf("%s %s: %w", role, addr, err)
		}
		t.desc.Nodes = append(t.desc.Nodes, compose.Node{Addr: addr, Role: role})
	}

	var sentinels []string
	for _, port := range ports[1+sentinelReplicas:] {
		addr := loopbackAddr(port)
		// Sentinel rewrites its config file, so it gets one of its own; the image's entrypoint
		// hands files in /data to the redis user before dropping privileges.
		conf := fmt.Sprintf("port %d\nbind %s\nsentinel monitor %s %s %d %d\nsentinel down-after-milliseconds %s 5000\nsentinel failover-timeout %s 10000\n",
			port, loopback, masterName, loopback, ports[0], sentinelQuorum, masterName, masterName)
		file := testcontainers.ContainerFile{Reader: strings.NewReader(conf), ContainerFilePath: "/data/sentinel.conf", FileMode: 0o644}
		cmd := []string{"redis-server", "/data/sentinel.conf", "--sentinel"}
		if _, err := t.runHost(ctx, wait.ForLog("+monitor master"), cmd, testcontainers.WithFiles(file)); err != nil {
			return fmt.Errorf("sentinel %s: %w", addr, err)
		}
		sentinels = append(sentinels, addr)
		t.desc.Nodes = append(t.desc.Nodes, compose.Node{Addr: addr, Role: compose.RoleSentinel})
	}

	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	want := fmt.Sprintf("status=ok,address=%s,slaves=%d,sentinels=%d", master, sentinelReplicas, sentinelCount)
	err = poll(ctx, "sentinels to agree", func(ctx context.Context) error {
		for _, s := range sentinels {
			info, err := command(ctx, s, "INFO", "sentinel")
			if err != nil {
				return err
			}
			if got := infoField(info, "master0"); !strings.Contains(got, want) {
				return fmt.Errorf("sentinel %s sees %q, want %q", s, got, want)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w; %s", err, hostNetworkHint)
	}
	t.addrs = sentinels
	t.desc.Kind = compose.KindSentinel
	t.desc.MasterName = masterName
	return nil
}
