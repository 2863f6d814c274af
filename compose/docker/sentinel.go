package docker

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/compose"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// sentinelReplicas and sentinelCount shape the sentinel topology: a master, two replicas and
// three sentinels with quorum two, the smallest deployment that survives losing any one node.
const (
	sentinelReplicas = 2
	sentinelCount    = 3
	sentinelQuorum   = 2
	// sentinelDownAfter and sentinelFailoverTimeout (ms) are the native provider's, so that
	// fault tests fail over as quickly on both.
	sentinelDownAfter       = 1000
	sentinelFailoverTimeout = 5000
	// sentinelPort is where every sentinel listens, each on its own container address.
	sentinelPort = 26379
	// dataPort is where every data node listens, each on its own container address.
	dataPort = 6379
)

// privateNetworkHint explains the usual reason a private-network topology is not reachable.
const privateNetworkHint = "sentinel's containers are on private bridge networks that clients reach at the containers' addresses: that needs a Linux Docker engine on this machine"

// startSentinel starts a master, its replicas and the sentinels on two private networks and
// waits until every sentinel sees the master as ok with all replicas and all other sentinels:
// only then does a failover test have a deployment that can fail over.
//
// Every node is on two networks: "master", whose address the master is known by, and "peers",
// whose address replicas and sentinels announce. So Partition can cut the master off from
// all of them by disconnecting the master from the peers network and them from the master
// network, while the master keeps its address, which clients on the host still reach (the
// host is on every bridge network), and the others still reach each other to elect and
// promote a replica. Heal reconnects them, and the old master can then reach the promoted
// one at its peers address to become its replica.
func (t *Topology) startSentinel(ctx context.Context, masterName string) error {
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	for _, suffix := range []string{"master", "peers"} {
		name := "lockbench-" + t.id[:8] + "-" + suffix
		if _, err := cli.NetworkCreate(ctx, name, client.NetworkCreateOptions{Driver: "bridge", Labels: t.labels()}); err != nil {
			return fmt.Errorf("create network %s: %w", name, err)
		}
		t.nets = append(t.nets, name)
	}
	masterNet, peersNet := t.nets[0], t.nets[1]
	t.masterNet, t.peersNet = masterNet, peersNet
	t.byAddr = map[string]testcontainers.Container{}

	ready := wait.ForLog("Ready to accept connections")
	// Each node gets its own copy of the server's options (the files' readers are read once).
	server := func() ([]string, []testcontainers.ContainerCustomizer) { return t.sec.server(dataPort, false) }
	cmd, opts := server()
	mc, err := t.run(ctx, ready, append(opts, testcontainers.WithCmd(cmd...), tcnetwork.WithNetworkName(nil, masterNet), tcnetwork.WithNetworkName(nil, peersNet))...)
	if err != nil {
		return fmt.Errorf("master: %w", err)
	}
	masterIP, err := containerIP(ctx, mc, masterNet)
	if err != nil {
		return err
	}
	master := net.JoinHostPort(masterIP, strconv.Itoa(dataPort))
	if _, err := t.probe.command(ctx, master, "PING"); err != nil {
		return fmt.Errorf("master %s: %w; %s", master, err, privateNetworkHint)
	}
	t.byAddr[master] = mc
	t.desc.Nodes = append(t.desc.Nodes, compose.Node{Addr: master, Role: compose.RoleMaster})

	// Peers start on the peers network (their first, whose address they announce) and join the
	// master network; the announce setting comes before REPLICAOF / MONITOR, so the address the
	// master and the other sentinels learn is the peers one.
	peer := func(ready *wait.LogStrategy, cmd []string, opts ...testcontainers.ContainerCustomizer) (testcontainers.Container, string, error) {
		opts = append(opts, testcontainers.WithCmd(cmd...), tcnetwork.WithNetworkName(nil, peersNet), tcnetwork.WithNetworkName(nil, masterNet))
		c, err := t.run(ctx, ready, opts...)
		if err != nil {
			return nil, "", err
		}
		ip, err := containerIP(ctx, c, peersNet)
		return c, ip, err
	}
	for range sentinelReplicas {
		cmd, opts := server()
		c, ip, err := peer(ready, cmd, opts...)
		if err != nil {
			return fmt.Errorf("replica: %w", err)
		}
		addr := net.JoinHostPort(ip, strconv.Itoa(dataPort))
		for _, cmd := range [][]string{
			{"CONFIG", "SET", "replica-announce-ip", ip},
			{"REPLICAOF", masterIP, strconv.Itoa(dataPort)},
		} {
			if _, err := t.probe.command(ctx, addr, cmd...); err != nil {
				return fmt.Errorf("replica %s: %s: %w; %s", addr, cmd[0], err, privateNetworkHint)
			}
		}
		t.byAddr[addr] = c
		t.desc.Nodes = append(t.desc.Nodes, compose.Node{Addr: addr, Role: compose.RoleReplica})
	}

	var replicas []string
	for _, n := range t.desc.Nodes {
		if n.Role == compose.RoleReplica {
			replicas = append(replicas, n.Addr)
		}
	}
	syncCtx, cancelSync := context.WithTimeout(ctx, readyTimeout)
	err = poll(syncCtx, "replicas to sync", func(ctx context.Context) error {
		return t.probe.replicasInSync(ctx, replicas)
	})
	cancelSync()
	if err != nil {
		return err
	}

	var sentinels []string
	for range sentinelCount {
		// Sentinel rewrites its config file, so it gets one of its own.
		conf := "port " + strconv.Itoa(sentinelPort) + "\n"
		if t.sec.tls {
			conf = "port 0\ntls-port " + strconv.Itoa(sentinelPort) + "\n"
		}
		conf += t.sec.sentinelConf()
		files := []testcontainers.ContainerFile{{Reader: strings.NewReader(conf), ContainerFilePath: "/data/sentinel.conf", FileMode: 0o600}}
		if t.sec.on() {
			files = append(files, t.sec.files("")[1:]...) // the TLS files; its config is /data/sentinel.conf
		}
		c, ip, err := peer(wait.ForLog("Sentinel ID is"), []string{"redis-server", "/data/sentinel.conf", "--sentinel"}, testcontainers.WithFiles(files...))
		if err != nil {
			return fmt.Errorf("sentinel: %w", err)
		}
		addr := net.JoinHostPort(ip, strconv.Itoa(sentinelPort))
		n := strconv.Itoa
		cmds := [][]string{
			{"SENTINEL", "CONFIG", "SET", "announce-ip", ip},
			{"SENTINEL", "MONITOR", masterName, masterIP, n(dataPort), n(sentinelQuorum)},
			{"SENTINEL", "SET", masterName, "down-after-milliseconds", n(sentinelDownAfter), "failover-timeout", n(sentinelFailoverTimeout)},
		}
		if auth := t.sec.monitorAuth(masterName); auth != nil {
			cmds = append(cmds, auth)
		}
		for _, cmd := range cmds {
			// cmd[:2] only in errors: SENTINEL SET may carry the password.
			if _, err := t.probe.command(ctx, addr, cmd...); err != nil {
				return fmt.Errorf("sentinel %s: %s: %w; %s", addr, strings.Join(cmd[:2], " "), err, privateNetworkHint)
			}
		}
		t.byAddr[addr] = c
		sentinels = append(sentinels, addr)
		t.desc.Nodes = append(t.desc.Nodes, compose.Node{Addr: addr, Role: compose.RoleSentinel})
	}

	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	want := fmt.Sprintf("status=ok,address=%s,slaves=%d,sentinels=%d", master, sentinelReplicas, sentinelCount)
	err = poll(ctx, "sentinels to agree", func(ctx context.Context) error {
		for _, s := range sentinels {
			info, err := t.probe.command(ctx, s, "INFO", "sentinel")
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
		return err
	}
	t.addrs = sentinels
	t.desc.Kind = compose.KindSentinel
	t.desc.MasterName = masterName
	return nil
}

// containerIP returns c's IPv4 address on the network named netName.
func containerIP(ctx context.Context, c testcontainers.Container, netName string) (string, error) {
	info, err := c.Inspect(ctx)
	if err != nil {
		return "", err
	}
	if info.NetworkSettings != nil {
		if ep := info.NetworkSettings.Networks[netName]; ep != nil && ep.IPAddress.IsValid() {
			return ep.IPAddress.String(), nil
		}
	}
	return "", fmt.Errorf("container %s has no address on network %s", c.GetContainerID()[:12], netName)
}
