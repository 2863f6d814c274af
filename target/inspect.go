package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// Node is one data node (master or replica) of the deployment, with the plain single-node
// connection Open made to it. Client is safe for concurrent use and closed by Target.Close.
type Node struct {
	// Addr is the address clients dial; Role is compose.RoleMaster or compose.RoleReplica.
	Addr, Role string
	Client     rueidis.Client
}

// connect opens one single-node connection per master and replica. A cluster or sentinel
// client would route INFO to whichever node it liked; the per-node stats need every node.
func (t *Target) connect() error {
	nodes := t.desc.Nodes
	if len(nodes) == 0 {
		// A topology that cannot describe itself: treat every address as a master.
		for _, a := range t.topo.Addrs() {
			nodes = append(nodes, compose.Node{Addr: a, Role: compose.RoleMaster})
		}
	}
	for _, n := range nodes {
		if n.Role == compose.RoleSentinel {
			continue
		}
		opt := nodeOption(n.Addr)
		t.conn.Rueidis(&opt, nil) // a sentinel deployment's masters and replicas take the data nodes' credentials
		c, err := rueidis.NewClient(opt)
		if err != nil {
			return fmt.Errorf("cannot connect to %s (%s): %w", n.Addr, n.Role, t.conn.Classify(n.Addr, err))
		}
		t.nodes = append(t.nodes, Node{Addr: n.Addr, Role: n.Role, Client: c})
	}
	if len(t.nodes) == 0 {
		return fmt.Errorf("the %s deployment has no master or replica to measure", t.spec)
	}
	return nil
}

// nodeOption is a plain connection to one node at addr, every step bounded by InspectTimeout.
func nodeOption(addr string) rueidis.ClientOption {
	return rueidis.ClientOption{
		InitAddress:       []string{addr},
		ForceSingleClient: true,
		DisableCache:      true,
		DisableRetry:      true,
		ClientSetInfo:     rueidis.DisableClientSetInfo, // Redis before 7.2 refuses it
		Dialer:            net.Dialer{Timeout: InspectTimeout},
		ConnWriteTimeout:  InspectTimeout,
	}
}

// Nodes returns the masters and replicas (sentinels hold no lock keys).
func (t *Target) Nodes() []Node { return append([]Node(nil), t.nodes...) }

// Masters returns the nodes that take writes.
func (t *Target) Masters() []Node {
	var out []Node
	for _, n := range t.nodes {
		if n.Role != compose.RoleReplica {
			out = append(out, n)
		}
	}
	return out
}

// DriverConfig is what the drivers connect to, with lease as their lock lease.
func (t *Target) DriverConfig(lease time.Duration) drivers.Config {
	cfg := drivers.Config{Topology: t.spec.Kind, Addrs: t.topo.Addrs(), Lease: lease, Conn: t.conn}
	if t.net != nil {
		cfg.Dialer = t.net.Dial
	}
	if t.spec.Kind == compose.KindSentinel {
		cfg.MasterName = t.MasterName()
	}
	return cfg
}

// MasterName is a sentinel deployment's master name: as the deployment describes itself, else
// as Spec.Topology gave it, else compose.DefaultMasterName.
func (t *Target) MasterName() string {
	switch {
	case t.desc.MasterName != "":
		return t.desc.MasterName
	case t.spec.MasterName != "":
		return t.spec.MasterName
	}
	return compose.DefaultMasterName
}

// Info is the topology as the result file records it.
func (t *Target) Info() *results.Topology {
	ti := &results.Topology{Kind: t.spec.Kind, Spec: t.spec.String(), Provider: t.provider, Nodes: []results.TopologyNode{}}
	if t.spec.Kind == compose.KindSentinel {
		ti.MasterName = t.MasterName()
	}
	for _, n := range t.desc.Nodes {
		ti.Nodes = append(ti.Nodes, results.TopologyNode{Addr: n.Addr, Role: n.Role})
	}
	if t.provider == ProviderAttached || t.secure != nil {
		ti.Connection = t.conn.Describe()
	}
	return ti
}

// ServerStats reads INFO commandstats, cpu, errorstats and stats from every node,
// concurrently. Any node that does not answer fails the snapshot: totals missing a node would
// be quietly wrong.
func (t *Target) ServerStats(ctx context.Context) (results.ServerStats, error) {
	out := make(results.ServerStats, len(t.nodes))
	errs := make([]error, len(t.nodes))
	var wg sync.WaitGroup
	for i, n := range t.nodes {
		wg.Go(func() {
			out[i], errs[i] = n.stats(ctx)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func (n Node) stats(ctx context.Context) (results.NodeStats, error) {
	ctx, cancel := context.WithTimeout(ctx, InspectTimeout)
	defer cancel()
	c := n.Client
	// Two INFO calls rather than one with two sections: Redis before 7 takes only one.
	resps := c.DoMulti(ctx,
		c.B().Info().Section("commandstats").Build(),
		c.B().Info().Section("cpu").Build())
	cmdText, err := resps[0].ToString()
	if err != nil {
		return results.NodeStats{}, fmt.Errorf("INFO commandstats on %s: %w", n.Addr, err)
	}
	cpuText, err := resps[1].ToString()
	if err != nil {
		return results.NodeStats{}, fmt.Errorf("INFO cpu on %s: %w", n.Addr, err)
	}
	cmds, err := results.ParseCommandStats(cmdText)
	if err != nil {
		return results.NodeStats{}, fmt.Errorf("%s: %w", n.Addr, err)
	}
	cpu, err := results.ParseCPU(cpuText)
	if err != nil {
		return results.NodeStats{}, fmt.Errorf("%s: %w", n.Addr, err)
	}
	ns := results.NodeStats{Addr: n.Addr, Role: n.Role, Commands: cmds, CPU: cpu}
	if err := n.refusalStats(ctx, &ns); err != nil {
		return results.NodeStats{}, fmt.Errorf("%s: %w", n.Addr, err)
	}
	return ns, nil
}

// refusalStats adds INFO errorstats and INFO stats' rejected_connections to ns: the servers'
// own count of what they refused, whatever the driver made of it (no silent zero, issue 36).
func (n Node) refusalStats(ctx context.Context, ns *results.NodeStats) error {
	c := n.Client
	resps := c.DoMulti(ctx,
		c.B().Info().Section("errorstats").Build(),
		c.B().Info().Section("stats").Build())
	text, err := resps[0].ToString()
	if err != nil {
		return fmt.Errorf("INFO errorstats: %w", err)
	}
	if ns.ErrorReplies, err = results.ParseErrorStats(text); err != nil {
		return err
	}
	if text, err = resps[1].ToString(); err != nil {
		return fmt.Errorf("INFO stats: %w", err)
	}
	ns.RejectedConnections, ns.ConnectionsReceived, err = results.ParseConnectionStats(text)
	return err
}

// RedisVersion returns the first node's redis_version, or "" if it cannot be read.
func (t *Target) RedisVersion(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, InspectTimeout)
	defer cancel()
	c := t.nodes[0].Client
	info, err := c.Do(ctx, c.B().Info().Section("server").Build()).ToString()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return ""
}
