package compose

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Settings of a started cluster.
const (
	// ClusterNodeTimeout is the nodes' cluster-node-timeout: a node unreachable for this long
	// is failed and its replica takes over. Redis's default is 15 s; 2 s keeps a cluster
	// failover test short while leaving a loaded test machine some slack before a spurious
	// failover.
	ClusterNodeTimeout = 2000 * time.Millisecond
	// ClusterMasters is how many masters (shards) a started cluster has.
	ClusterMasters = 3
	// ClusterReplicas is how many replicas a started cluster has: one per master.
	ClusterReplicas = ClusterMasters
	// ClusterSlots is the number of hash slots of a Redis Cluster.
	ClusterSlots = 16384
)

// clusterConfName is each node's cluster-config-file, inside its own dir.
const clusterConfName = "nodes.conf"

// Cluster is a private Redis Cluster started by StartCluster: ClusterMasters masters, each with
// one replica, every node a native process in its own temp dir. Its methods are safe for
// concurrent use.
type Cluster struct {
	masters  nodeList // at start
	replicas nodeList // replicas[i] replicated masters[i] at start
	admin    *adminConns
}

var _ Topology = (*Cluster)(nil)

// StartCluster starts a cluster of ClusterMasters masters and ClusterReplicas replicas on free
// ports of opt.Host, with no persistence and a cluster-node-timeout of ClusterNodeTimeout: it
// assigns all ClusterSlots slots evenly, joins the nodes (CLUSTER MEET), attaches one replica
// to each master (CLUSTER REPLICATE), and waits until every node reports cluster_state:ok, all
// nodes agree on the slot map and roles, and every replica's link is up. opt.StartTimeout
// bounds the whole start (zero means DefaultTopologyStartTimeout); opt.ExtraArgs go to every
// node. ctx bounds only the start. On failure nothing is left running and the error includes
// the end of the log of the node that failed or was not ready. StartCluster is safe for
// concurrent use; each call starts its own servers.
func StartCluster(ctx context.Context, opt NativeOptions) (*Cluster, error) {
	opt, bin, err := topologyOptions(opt)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, opt.StartTimeout, &startTimeoutError{timeout: opt.StartTimeout})
	defer cancel()
	c := &Cluster{admin: newAdminConns()}
	if c.admin.apply, err = opt.applyAdmin(); err != nil {
		return nil, err
	}
	if err := c.start(ctx, bin, opt); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// start starts the nodes and builds the cluster, filling c as it goes so that Close can stop
// whatever started.
func (c *Cluster) start(ctx context.Context, bin string, opt NativeOptions) error {
	nodes, err := startAll(ClusterMasters+ClusterReplicas, func() (*Single, error) {
		return startNode(ctx, bin, opt, func(port int) ([]string, error) {
			// The bus port is not left to port+10000, which can exceed 65535 for the
			// kernel's ephemeral ports, or be taken.
			bus, err := freePort(opt.Host)
			for err == nil && bus == port {
				bus, err = freePort(opt.Host)
			}
			if err != nil {
				return nil, err
			}
			args := []string{
				"--cluster-enabled", "yes",
				"--cluster-config-file", clusterConfName, // relative: inside the node's dir
				"--cluster-node-timeout", strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10),
				"--cluster-port", itoa(bus),
			}
			if opt.TLS != nil {
				args = append(args, "--tls-cluster", "yes")
			}
			return args, nil
		})
	})
	c.masters, c.replicas = nodes[:ClusterMasters], nodes[ClusterMasters:]
	if err != nil {
		return err
	}
	all := c.all()
	fail := func(err error) error {
		var nr *notReadyError
		if !errors.As(err, &nr) {
			err = notReady(addrOf(err, all), "%v", err)
		}
		return all.notReady(err)
	}

	// Distinct config epochs, as redis-cli --cluster create sets them, spare the nodes
	// resolving epoch collisions before they can agree.
	for i, n := range all {
		if err := c.admin.ok(ctx, n.addr, "CLUSTER", "SET-CONFIG-EPOCH", itoa(i+1)); err != nil {
			return fail(err)
		}
	}
	for i, m := range c.masters {
		lo, hi := i*ClusterSlots/ClusterMasters, (i+1)*ClusterSlots/ClusterMasters-1
		if err := c.admin.ok(ctx, m.addr, "CLUSTER", "ADDSLOTSRANGE", itoa(lo), itoa(hi)); err != nil {
			return fail(err)
		}
	}
	// Every node meets the first; gossip tells each about the rest.
	first := all[0].addr
	busPort, err := c.configGet(ctx, first, "cluster-port")
	if err != nil {
		return fail(err)
	}
	fhost, fport := hostPort(first)
	for _, n := range all[1:] {
		if err := c.admin.ok(ctx, n.addr, "CLUSTER", "MEET", fhost, fport, busPort); err != nil {
			return fail(err)
		}
	}
	if err := poll(ctx, c.allKnown); err != nil {
		return fail(err)
	}
	for i, r := range c.replicas {
		id, err := c.admin.str(ctx, c.masters[i].addr, "CLUSTER", "MYID")
		if err != nil {
			return fail(err)
		}
		if err := c.admin.ok(ctx, r.addr, "CLUSTER", "REPLICATE", id); err != nil {
			return fail(err)
		}
	}
	if err := poll(ctx, c.ready); err != nil {
		return fail(err)
	}
	return nil
}

// addrOf returns the node whose address err names first (admin errors start with it), or the
// first node.
func addrOf(err error, nodes nodeList) string {
	for _, n := range nodes {
		if strings.HasPrefix(err.Error(), n.addr+":") {
			return n.addr
		}
	}
	return nodes[0].addr
}

// all returns masters then replicas, as started.
func (c *Cluster) all() nodeList { return slices.Concat(c.masters, c.replicas) }

// configGet returns one CONFIG GET value.
func (c *Cluster) configGet(ctx context.Context, addr, name string) (string, error) {
	m, err := c.admin.do(ctx, addr, "CONFIG", "GET", name)
	if err != nil {
		return "", err
	}
	kv, err := m.AsStrSlice()
	if err != nil || len(kv) != 2 {
		return "", fmt.Errorf("%s: CONFIG GET %s: unexpected reply %q (%v)", addr, name, kv, err)
	}
	return kv[1], nil
}

// allKnown checks that every node knows every other, past the handshake, over a connected bus
// link: CLUSTER REPLICATE needs the replica to know its master.
func (c *Cluster) allKnown(ctx context.Context) error {
	all := c.all()
	for _, n := range all {
		nodes, err := c.nodes(ctx, n.addr)
		if err != nil {
			return notReady(n.addr, "%v", err)
		}
		if len(nodes) != len(all) {
			return notReady(n.addr, "knows %d of %d nodes", len(nodes), len(all))
		}
		for _, cn := range nodes {
			if cn.has("handshake") || cn.has("noaddr") || (!cn.has("myself") && cn.link != "connected") {
				return notReady(n.addr, "node %s %s is %s, link %s", cn.id, cn.addr, strings.Join(cn.flags, ","), cn.link)
			}
		}
	}
	return nil
}

// ready checks that every node says cluster_state:ok, all give the same slot map and roles,
// that map has every replica attached to its master, and every replica's link is up.
func (c *Cluster) ready(ctx context.Context) error {
	all := c.all()
	want := ""
	for _, n := range all {
		inf, err := c.admin.str(ctx, n.addr, "CLUSTER", "INFO")
		if err != nil {
			return notReady(n.addr, "%v", err)
		}
		ci := parseInfo(inf)
		if ci["cluster_state"] != "ok" || ci["cluster_slots_assigned"] != itoa(ClusterSlots) {
			return notReady(n.addr, "cluster_state:%s cluster_slots_assigned:%s", ci["cluster_state"], ci["cluster_slots_assigned"])
		}
		nodes, err := c.nodes(ctx, n.addr)
		if err != nil {
			return notReady(n.addr, "%v", err)
		}
		if err := checkClusterView(nodes, len(all)); err != nil {
			return notReady(n.addr, "%v", err)
		}
		view := clusterView(nodes)
		if want == "" {
			want = view
		} else if view != want {
			return notReady(n.addr, "its slot map and roles differ from %s's:\n%s\nvs\n%s", all[0].addr, view, want)
		}
	}
	for _, r := range c.replicas {
		inf, err := c.admin.info(ctx, r.addr, "replication")
		if err != nil {
			return notReady(r.addr, "%v", err)
		}
		if st := inf["master_link_status"]; st != "up" {
			return notReady(r.addr, "replica link to its master is %q, want up", st)
		}
	}
	return nil
}

// checkClusterView checks one node's view of a healthy started cluster: n nodes, all sound,
// ClusterMasters masters with slots, each with one replica.
func checkClusterView(nodes []clusterNode, n int) error {
	if len(nodes) != n {
		return fmt.Errorf("knows %d of %d nodes", len(nodes), n)
	}
	replicasOf := make(map[string]int)
	masters := 0
	for _, cn := range nodes {
		for _, bad := range []string{"fail", "fail?", "handshake", "noaddr"} {
			if cn.has(bad) {
				return fmt.Errorf("node %s is %s", cn.addr, strings.Join(cn.flags, ","))
			}
		}
		switch {
		case cn.has("master"):
			masters++
		case cn.has("slave"):
			replicasOf[cn.master]++
		}
	}
	if masters != ClusterMasters {
		return fmt.Errorf("sees %d masters, want %d", masters, ClusterMasters)
	}
	for _, cn := range nodes {
		if cn.has("master") && replicasOf[cn.id] != ClusterReplicas/ClusterMasters {
			return fmt.Errorf("master %s has %d replicas, want %d", cn.addr, replicasOf[cn.id], ClusterReplicas/ClusterMasters)
		}
	}
	return nil
}

// clusterView is the part of a node's CLUSTER NODES that all nodes must agree on: ids,
// addresses, roles and slots; not flags like myself, link states or ping times.
func clusterView(nodes []clusterNode) string {
	lines := make([]string, 0, len(nodes))
	for _, cn := range nodes {
		role := RoleMaster
		if cn.has("slave") {
			role = RoleReplica
		}
		lines = append(lines, fmt.Sprintf("%s %s %s %s %s", cn.id, cn.addr, role, cn.master, strings.Join(cn.slots, " ")))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// nodes returns CLUSTER NODES from addr, parsed.
func (c *Cluster) nodes(ctx context.Context, addr string) ([]clusterNode, error) {
	return clusterNodesOf(ctx, c.admin, addr)
}

// clusterNodesOf returns CLUSTER NODES from addr, parsed.
func clusterNodesOf(ctx context.Context, a *adminConns, addr string) ([]clusterNode, error) {
	s, err := a.str(ctx, addr, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	nodes, err := parseClusterNodes(s)
	if err != nil {
		return nil, fmt.Errorf("%s: CLUSTER NODES: %w", addr, err)
	}
	placeSelf(nodes, addr)
	return nodes, nil
}

// placeSelf gives the node that answered at asked its address when it listed itself without a
// host (":port"), as a node does that never met another (a cluster of one node): dialled as
// it stands, ":port" is a port of this machine, not of the node's.
func placeSelf(nodes []clusterNode, asked string) {
	host, _, err := net.SplitHostPort(asked)
	if err != nil {
		return
	}
	for i := range nodes {
		if nodes[i].has("myself") && strings.HasPrefix(nodes[i].addr, ":") {
			nodes[i].addr = net.JoinHostPort(host, nodes[i].addr[1:])
		}
	}
}

// clusterNode is one line of CLUSTER NODES.
type clusterNode struct {
	id     string
	addr   string // ip:port, without the bus port and hostname
	flags  []string
	master string // the master's id for a replica, "-" for a master
	link   string // connected or disconnected
	slots  []string
}

func (n clusterNode) has(flag string) bool { return slices.Contains(n.flags, flag) }

// parseClusterNodes reads CLUSTER NODES: one node per line,
// "<id> <ip:port@cport[,hostname]> <flags> <master> <ping-sent> <pong-recv> <epoch> <link> <slot>...".
func parseClusterNodes(s string) ([]clusterNode, error) {
	var out []clusterNode
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("malformed line %q: want at least 8 fields", line)
		}
		addr, _, _ := strings.Cut(f[1], "@")
		addr, _, _ = strings.Cut(addr, ",")
		out = append(out, clusterNode{
			id:     f[0],
			addr:   addr,
			flags:  strings.Split(f[2], ","),
			master: f[3],
			link:   f[7],
			slots:  f[8:],
		})
	}
	if len(out) == 0 {
		return nil, errors.New("no nodes")
	}
	return out, nil
}

// firstSlot returns the lowest slot a node serves, or ClusterSlots if none; a slot entry is
// "N", "N-M", or an importing/migrating marker "[...]" that does not count.
func (n clusterNode) firstSlot() int {
	first := ClusterSlots
	for _, s := range n.slots {
		if strings.HasPrefix(s, "[") {
			continue
		}
		lo, _, _ := strings.Cut(s, "-")
		if v, err := strconv.Atoi(lo); err == nil && v < first {
			first = v
		}
	}
	return first
}

// serving reports whether n is a master that serves slots and is not failed.
func (n clusterNode) serving() bool {
	return n.has("master") && !n.has("fail") && n.firstSlot() < ClusterSlots
}

// clusterDescription turns CLUSTER NODES into a Description: masters in slot order, then
// replicas in the order of their masters. A failed master without slots is listed as a
// replica: it lost its shard to a failover and rejoins as its replacement's replica.
func clusterDescription(nodes []clusterNode) Description {
	var masters, replicas []clusterNode
	for _, n := range nodes {
		if n.has("master") && (n.firstSlot() < ClusterSlots || !n.has("fail")) {
			masters = append(masters, n)
		} else {
			replicas = append(replicas, n)
		}
	}
	slices.SortStableFunc(masters, func(a, b clusterNode) int { return a.firstSlot() - b.firstSlot() })
	rank := make(map[string]int)
	for i, m := range masters {
		rank[m.id] = i
	}
	slices.SortStableFunc(replicas, func(a, b clusterNode) int {
		ra, oka := rank[a.master]
		rb, okb := rank[b.master]
		if !oka {
			ra = len(masters)
		}
		if !okb {
			rb = len(masters)
		}
		return ra - rb
	})
	d := Description{Kind: KindCluster}
	for _, m := range masters {
		d.Nodes = append(d.Nodes, Node{Addr: m.addr, Role: RoleMaster})
	}
	for _, r := range replicas {
		d.Nodes = append(d.Nodes, Node{Addr: r.addr, Role: RoleReplica})
	}
	return d
}

// liveNodes asks every node in addrs for CLUSTER NODES at once and returns the first answer
// within describeTimeout, so that dead or paused nodes cost nothing when one is alive.
func liveNodes(a *adminConns, addrs []string) ([]clusterNode, error) {
	if len(addrs) == 0 {
		return nil, errors.New("compose: no cluster node to ask")
	}
	ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
	defer cancel() // ends the queries still waiting once one has answered
	type reply struct {
		nodes []clusterNode
		err   error
	}
	replies := make(chan reply, len(addrs)) // buffered: late queries never block
	for _, addr := range addrs {
		go func() {
			nodes, err := clusterNodesOf(ctx, a, addr)
			replies <- reply{nodes, err}
		}()
	}
	var errs []error
	for range addrs {
		r := <-replies
		if r.err == nil {
			return r.nodes, nil
		}
		errs = append(errs, r.err)
	}
	return nil, errors.Join(errs...)
}

// Kind returns KindCluster. It is safe for concurrent use.
func (c *Cluster) Kind() string { return KindCluster }

// Addrs returns every node's address, the masters at start first, in a slice the caller owns.
// Cluster clients need only one, but take them all as seeds. It is safe for concurrent use.
func (c *Cluster) Addrs() []string { return c.all().addrs() }

// Masters returns the addresses of the masters that serve slots now, in slot order; after a
// failover that includes the promoted replica. If no node answers within a second it returns
// the masters at start. It is safe for concurrent use.
func (c *Cluster) Masters() []string {
	nodes, err := liveNodes(c.admin, c.Addrs())
	if err != nil {
		return c.masters.addrs()
	}
	var out []string
	for _, n := range clusterDescription(nodes).Nodes {
		if n.Role != RoleMaster {
			break
		}
		for _, cn := range nodes {
			if cn.addr == n.Addr && cn.serving() {
				out = append(out, n.Addr)
			}
		}
	}
	return out
}

// Describe returns every node with its current role as the first node that answers reports it
// (CLUSTER NODES): masters in slot order, then replicas. If no node answers within a second it
// reports the roles at start. It is safe for concurrent use.
func (c *Cluster) Describe() Description {
	if nodes, err := liveNodes(c.admin, c.Addrs()); err == nil {
		return clusterDescription(nodes)
	}
	d := Description{Kind: KindCluster}
	for _, a := range c.masters.addrs() {
		d.Nodes = append(d.Nodes, Node{Addr: a, Role: RoleMaster})
	}
	for _, a := range c.replicas.addrs() {
		d.Nodes = append(d.Nodes, Node{Addr: a, Role: RoleReplica})
	}
	return d
}

// Pid returns the process id of the node started at addr, or 0 if none was. It is safe for
// concurrent use.
func (c *Cluster) Pid(addr string) int { return c.all().pid(addr) }

// Kill sends SIGKILL to the node started at addr and waits until it is gone, for fault
// injection (kill a master to make its replica take over after ClusterNodeTimeout); killing one
// already dead is not an error. It returns an error wrapping ErrUnknownNode if no node was
// started at addr. It is safe for concurrent use.
func (c *Cluster) Kill(addr string) error { return c.all().kill(addr) }

// Close stops every node, waits until all are gone and removes their temp dirs. Nodes killed
// before are not an error. Close is idempotent and safe for concurrent use.
func (c *Cluster) Close() error {
	c.admin.close()
	return c.all().stop()
}
