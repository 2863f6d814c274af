package compose

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/lockbench/lockbench/conn"
	"github.com/redis/rueidis"
)

// ErrTopologyMismatch is wrapped by Attach's errors when a deployment answers but is not what
// the spec says: a standalone server given as a cluster, a sentinel that does not know the
// master name, a replica given as a master. It is a value, safe to share between goroutines.
var ErrTopologyMismatch = errors.New("compose: deployment does not match the topology")

// ErrUnreachable is wrapped by Attach's errors when an address does not answer in time. It is
// a value, safe to share between goroutines.
var ErrUnreachable = errors.New("compose: no answer")

// Attached is an existing deployment that Attach checked and described. Closing it closes
// only the connections Attach opened; the deployment is not touched. Its methods are safe for
// concurrent use.
type Attached struct {
	spec  Spec
	addrs []string
	desc  Description // as Attach found it
	admin *adminConns
	conn  *conn.Settings // nil: plaintext, no credentials
}

var _ Topology = (*Attached)(nil)

// Attach checks that addrs are an existing deployment of the kind spec names and returns it as
// a Topology, for runs against real deployments (--addr, --topology). Every address must
// answer within ctx, and:
//   - single: exactly one address, a standalone master (not a replica, sentinel or cluster node);
//   - masters: each a standalone master, as many as spec.Masters when that is not zero;
//   - cluster: each a cluster node (cluster_enabled:1) reporting cluster_state:ok;
//   - sentinel: each a Redis Sentinel that monitors spec.MasterName (DefaultMasterName if empty).
//
// Errors name the address and what was found; they wrap ErrBadSpec for unusable input,
// ErrUnreachable for an address that does not answer and ErrTopologyMismatch for a deployment of
// another shape. Attach is safe for concurrent use.
func Attach(ctx context.Context, spec Spec, addrs []string) (Topology, error) {
	return attach(ctx, spec, addrs, nil)
}

// AttachWith is Attach to the addresses of c, connecting as c says: its credentials (the
// sentinels' own for a sentinel deployment's sentinels), database and TLS; Unix sockets for
// single and masters. A refused password or user wraps conn.ErrAuth, a failed TLS handshake
// conn.ErrTLS, a refused INFO or SELECT conn.ErrPermission, a database the server lacks
// conn.ErrBadInput, a server that is not Redis conn.ErrNotRedis (see conn.Refused), each
// saying what to change; none wraps ErrUnreachable. It is safe for
// concurrent use.
func AttachWith(ctx context.Context, spec Spec, c *conn.Settings) (Topology, error) {
	return attach(ctx, spec, c.Addrs(), c)
}

func attach(ctx context.Context, spec Spec, addrs []string, c *conn.Settings) (Topology, error) {
	if err := checkAttachInput(spec, addrs, c.Unix()); err != nil {
		return nil, err
	}
	a := &Attached{spec: spec, addrs: slices.Clone(addrs), admin: newAdminConns(), conn: c}
	if c != nil {
		if spec.Kind == KindSentinel {
			a.admin.apply = func(o *rueidis.ClientOption) { c.RueidisSentinel(o, nil) }
		} else {
			a.admin.apply = func(o *rueidis.ClientOption) { c.Rueidis(o, nil) }
		}
	}
	switch spec.Kind {
	case KindSentinel:
		a.spec.MasterName = spec.masterName()
	case KindMasters:
		a.spec.Masters = len(addrs) // "masters" with no N takes as many as given
	}
	if err := a.check(ctx); err != nil {
		a.admin.close()
		return nil, err
	}
	return a, nil
}

// checkAttachInput checks what can be checked without the network.
func checkAttachInput(spec Spec, addrs []string, unix bool) error {
	switch spec.Kind {
	case KindSingle, KindCluster:
	case KindSentinel:
		if name := spec.masterName(); strings.ContainsAny(name, " \t\r\n") {
			return fmt.Errorf("%w: sentinel master name %q contains white space", ErrBadSpec, name)
		}
	case KindMasters:
		if spec.Masters < 0 || spec.Masters > MaxMasters {
			return fmt.Errorf("%w %q: masters:N needs N from 1 to %d", ErrBadSpec, spec.String(), MaxMasters)
		}
	default:
		return fmt.Errorf("%w %q: want single, sentinel, cluster or masters:N", ErrBadSpec, spec.Kind)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("%w: attach to %s: no address given", ErrBadSpec, spec)
	}
	seen := make(map[string]bool)
	for _, addr := range addrs {
		if unix {
			if !strings.HasPrefix(addr, "/") {
				return fmt.Errorf("%w: socket %q: want an absolute path", ErrBadSpec, addr)
			}
			if spec.Kind == KindSentinel || spec.Kind == KindCluster {
				return fmt.Errorf("%w: %s over a Unix socket: its nodes tell clients TCP addresses", ErrBadSpec, spec)
			}
			if seen[addr] {
				return fmt.Errorf("%w: address %s given twice", ErrBadSpec, addr)
			}
			seen[addr] = true
			continue
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil || host == "" {
			return fmt.Errorf("%w: address %q: want host:port", ErrBadSpec, addr)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("%w: address %q: port must be a number from 1 to 65535", ErrBadSpec, addr)
		}
		if seen[addr] {
			return fmt.Errorf("%w: address %s given twice", ErrBadSpec, addr)
		}
		seen[addr] = true
	}
	switch {
	case spec.Kind == KindSingle && len(addrs) != 1:
		return fmt.Errorf("%w: single takes exactly one address, got %d (%s): use masters:%d for independent masters",
			ErrBadSpec, len(addrs), strings.Join(addrs, ","), len(addrs))
	case spec.Kind == KindMasters && spec.Masters > 0 && spec.Masters != len(addrs):
		return fmt.Errorf("%w: %s needs %d addresses, got %d (%s)", ErrBadSpec, spec, spec.Masters, len(addrs), strings.Join(addrs, ","))
	}
	return nil
}

// check asks every address what it is and compares that with the spec, then describes the
// deployment.
func (a *Attached) check(ctx context.Context) error {
	infos := make([]map[string]string, len(a.addrs))
	errs := make([]error, len(a.addrs))
	var wg sync.WaitGroup
	for i, addr := range a.addrs {
		wg.Go(func() { infos[i], errs[i] = a.probe(ctx, addr) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, addr := range a.addrs {
		if err := a.checkNode(ctx, addr, infos[i]); err != nil {
			return err
		}
	}
	switch a.spec.Kind {
	case KindSentinel:
		d, err := sentinelDescription(ctx, a.admin, a.addrs, a.spec.MasterName)
		if err != nil {
			return err
		}
		a.desc = d
	case KindCluster:
		nodes, err := clusterNodesOf(ctx, a.admin, a.addrs[0])
		if err != nil {
			return err
		}
		a.desc = clusterDescription(nodes)
	default:
		a.desc = Description{Kind: a.spec.Kind}
		for _, addr := range a.addrs {
			a.desc.Nodes = append(a.desc.Nodes, Node{Addr: addr, Role: RoleMaster})
		}
	}
	return nil
}

// probe returns INFO (default sections) from addr; an address that does not answer wraps
// ErrUnreachable.
func (a *Attached) probe(ctx context.Context, addr string) (map[string]string, error) {
	s, err := a.admin.str(ctx, addr, "INFO")
	if err != nil {
		if c := a.conn.Classify(addr, causeOf(err)); conn.Refused(c) {
			return nil, fmt.Errorf("compose: attach: %w", c)
		}
		if isRedisError(err) {
			// It answered, but with an error: report it as it is.
			return nil, fmt.Errorf("compose: attach to %w", err)
		}
		return nil, fmt.Errorf("%w from %s (is Redis running there?): %w", ErrUnreachable, addr, a.conn.Classify(addr, causeOf(err)))
	}
	info := parseInfo(s)
	if info["redis_version"] == "" {
		// Every Redis (and sentinel) names its version in INFO; a stub or proxy that answers
		// +OK to everything does not, and its role and mode would read as empty.
		return nil, fmt.Errorf("compose: attach: %w: %s: its answer to INFO (%.40q) names no redis_version: the server's answers make no sense for Redis; check the address and port", conn.ErrNotRedis, addr, s)
	}
	return info, nil
}

// checkNode compares what addr said about itself with what the spec wants there.
func (a *Attached) checkNode(ctx context.Context, addr string, info map[string]string) error {
	mode := info["redis_mode"]
	cluster := info["cluster_enabled"] == "1" || mode == "cluster"
	mismatch := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s %s", ErrTopologyMismatch, addr, fmt.Sprintf(format, args...))
	}
	switch a.spec.Kind {
	case KindSentinel:
		if mode != "sentinel" {
			return mismatch("is not a Redis Sentinel (redis_mode:%s): --topology sentinel takes the sentinels' addresses", mode)
		}
		m, err := a.admin.do(ctx, addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", a.spec.MasterName)
		if err != nil {
			return err
		}
		if m.IsNil() {
			known := "none"
			if masters, err := sentinelTable(ctx, a.admin, addr, "MASTERS"); err == nil && len(masters) > 0 {
				var names []string
				for _, f := range masters {
					names = append(names, f["name"])
				}
				known = strings.Join(names, ", ")
			}
			return mismatch("is a sentinel that monitors no master named %q (it monitors: %s)", a.spec.MasterName, known)
		}
	case KindCluster:
		if mode == "sentinel" {
			return mismatch("is a Redis Sentinel, not a cluster node: use --topology sentinel")
		}
		if !cluster {
			return mismatch("is not a cluster node (cluster_enabled:0): use --topology single or masters:N")
		}
		s, err := a.admin.str(ctx, addr, "CLUSTER", "INFO")
		if err != nil {
			return err
		}
		if st := parseInfo(s)["cluster_state"]; st != "ok" {
			return mismatch("is a cluster node whose cluster is not healthy (cluster_state:%s)", st)
		}
	default: // single, masters
		use := "--topology " + a.spec.String()
		switch {
		case mode == "sentinel":
			return mismatch("is a Redis Sentinel, not a data node: use --topology sentinel with the sentinels' addresses")
		case cluster:
			return mismatch("is a cluster node (cluster_enabled:1): use --topology cluster")
		case info["role"] != "master":
			return mismatch("is a %s (of %s), which refuses writes: %s needs masters", info["role"],
				net.JoinHostPort(info["master_host"], info["master_port"]), use)
		}
	}
	return nil
}

// sentinelDescription describes a sentinel deployment as the sentinels see it: the master,
// the replicas and sentinels the first answering sentinel knows, and the given sentinels.
func sentinelDescription(ctx context.Context, a *adminConns, sentinels []string, name string) (Description, error) {
	master, err := sentinelMasterAddr(ctx, a, sentinels, name)
	if err != nil {
		return Description{}, err
	}
	d := Description{Kind: KindSentinel, MasterName: name, Nodes: []Node{{Addr: master, Role: RoleMaster}}}
	seen := map[string]bool{master: true}
	add := func(addr, role string) {
		if !seen[addr] {
			seen[addr] = true
			d.Nodes = append(d.Nodes, Node{Addr: addr, Role: role})
		}
	}
	var replicas, others []map[string]string
	for _, sn := range sentinels {
		if replicas, err = sentinelTable(ctx, a, sn, "REPLICAS", name); err == nil {
			others, _ = sentinelTable(ctx, a, sn, "SENTINELS", name)
			break
		}
	}
	for _, r := range replicas {
		add(net.JoinHostPort(r["ip"], r["port"]), RoleReplica)
	}
	for _, sn := range sentinels {
		add(sn, RoleSentinel)
	}
	for _, s := range others {
		add(net.JoinHostPort(s["ip"], s["port"]), RoleSentinel)
	}
	return d, nil
}

// Kind returns the kind Attach was given. It is safe for concurrent use.
func (a *Attached) Kind() string { return a.spec.Kind }

// Addrs returns the addresses Attach was given, in a slice the caller owns. It is safe for
// concurrent use.
func (a *Attached) Addrs() []string { return slices.Clone(a.addrs) }

// MasterName returns the sentinel master name for a sentinel deployment, "" otherwise. It is
// safe for concurrent use.
func (a *Attached) MasterName() string { return a.spec.MasterName }

// Describe returns the deployment's nodes and roles. For sentinel and cluster deployments it
// asks them again (roles change on failover), and if none answers within a second it returns
// what Attach found. It is safe for concurrent use.
func (a *Attached) Describe() Description {
	switch a.spec.Kind {
	case KindSentinel:
		ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
		defer cancel()
		if d, err := sentinelDescription(ctx, a.admin, a.addrs, a.spec.MasterName); err == nil {
			return d
		}
	case KindCluster:
		if nodes, err := liveNodes(a.admin, a.addrs); err == nil {
			return clusterDescription(nodes)
		}
	}
	d := a.desc
	d.Nodes = slices.Clone(d.Nodes)
	return d
}

// Close closes the connections Attach and Describe opened; the deployment keeps running. It
// is idempotent and safe for concurrent use.
func (a *Attached) Close() error {
	a.admin.close()
	return nil
}
