package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/netem"
	"github.com/lockbench/lockbench/preflight"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// Providers: who starts the topology when no --addr is given, or that lockbench attached.
const (
	providerNative   = "native"
	providerDocker   = "docker"
	providerAttached = "attached"
)

const (
	// inspectTimeout bounds one INFO, FLUSHALL or SCAN step on one node.
	inspectTimeout = 5 * time.Second
	// cleanTimeout bounds the key deletion between runs on an attached deployment, whose
	// keyspace may be large: past it lockbench warns and goes on.
	cleanTimeout = 60 * time.Second
)

// target is the Redis deployment the runs drive: a topology lockbench started (and stops), or
// one it attached to with --addr. It keeps one plain connection per data node, independent of
// the drivers' clients, to read INFO from every node and to clean the keyspace between runs.
// Safe for concurrent use once open.
type target struct {
	spec     compose.Spec
	conn     *conn.Settings // --addr's credentials and TLS; nil for a topology lockbench started
	topo     compose.Topology
	provider string
	desc     compose.Description
	nodes    []inspectNode // masters and replicas; sentinels hold no lock keys
	net      *netem.Net    // --net: the drivers dial through it; nil dials directly
	ui       *progressUI
	secure   *secureStart // --auth, --tls on a topology lockbench started: removed by close
	unpin    func()       // puts lockbench's CPU placement back (--pin, --client-cpus)
}

type inspectNode struct {
	addr, role string
	c          rueidis.Client
}

// startTopology starts or attaches to the deployment the flags name. onStart is called with a
// started topology before anything else can fail, so a second Ctrl-C can stop it.
func startTopology(ctx context.Context, f *runFlags, ui *progressUI, onStart func(compose.Topology)) (*target, error) {
	t := &target{spec: f.spec, provider: f.provider, ui: ui, conn: f.conn.settings}
	var err error
	if len(f.addrs) > 0 {
		t.provider = providerAttached
		for _, w := range t.conn.Warnings() {
			ui.line("warning: %s", w)
		}
		ui.line("attaching to the %s deployment at %s", f.spec, t.conn)
		t.topo, err = compose.AttachWith(ctx, f.spec, t.conn)
	} else {
		var native compose.NativeOptions
		if f.conn.startSecure {
			dir, derr := os.MkdirTemp("", "lockbench-secure-")
			if derr != nil {
				return nil, derr
			}
			os.Remove(dir) // newSecureStart makes it, 0700
			if t.secure, err = newSecureStart(dir, f.provider, f.conn.auth, f.conn.opt.TLS); err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
			native = t.secure.native
		}
		native.CPUs = f.pin.server
		if h := f.gens.nativeHost(); h != "" {
			native.Host = h // where the generator containers reach the servers
		}
		ui.line("starting a private %s topology (%s%s; use --addr to attach to an existing Redis)", f.spec, f.provider, t.secureDesc())
		t.topo, err = startProvider(ctx, f.provider, f.image, f.spec, native)
	}
	if err != nil {
		t.removeSecure()
		return nil, err
	}
	onStart(t.topo)
	if t.secure != nil {
		if t.conn, err = t.secure.settings(f.spec, t.topo); err != nil {
			t.close()
			return nil, err
		}
		// Drivers, generator processes and the target all connect with the same settings.
		f.conn.settings, f.conn.child = t.conn, t.secure.flags(f.spec.Kind, false)
	}
	t.desc = t.topo.Describe()
	if t.provider != providerAttached {
		for _, n := range t.desc.Nodes {
			if pid := nodePid(t.topo, n.Addr); pid > 0 {
				ui.line("redis-server pid %d on %s (%s)", pid, n.Addr, n.Role)
			}
		}
	}
	if err := t.connect(); err != nil {
		t.close()
		return nil, err
	}
	if t.unpin, err = f.pin.apply(ui); err != nil {
		t.close()
		return nil, err
	}
	if c := f.net.cond; c != nil {
		t.net = netem.New(*c)
		ui.line("network: %s between the clients and Redis (in-process proxies; a round trip gains %v)", c, c.RoundTrip())
	}
	return t, nil
}

// nodePid returns the process id of the server lockbench started at addr, when the topology
// can tell: Single has Pid(), the multi-node topologies Pid(addr).
func nodePid(topo compose.Topology, addr string) int {
	switch p := topo.(type) {
	case interface{ Pid() int }:
		return p.Pid()
	case interface{ Pid(string) int }:
		return p.Pid(addr)
	}
	return 0
}

// connect opens one single-node connection per master and replica. A cluster or sentinel
// client would route INFO to whichever node it liked; the per-node stats need every node.
func (t *target) connect() error {
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
		opt := rueidis.ClientOption{
			InitAddress:       []string{n.Addr},
			ForceSingleClient: true,
			DisableCache:      true,
			DisableRetry:      true,
			ClientSetInfo:     rueidis.DisableClientSetInfo, // Redis before 7.2 refuses it
			Dialer:            net.Dialer{Timeout: inspectTimeout},
			ConnWriteTimeout:  inspectTimeout,
		}
		t.conn.Rueidis(&opt, nil) // a sentinel deployment's masters and replicas take the data nodes' credentials
		c, err := rueidis.NewClient(opt)
		if err != nil {
			return fmt.Errorf("cannot connect to %s (%s): %w", n.Addr, n.Role, t.conn.Classify(n.Addr, err))
		}
		t.nodes = append(t.nodes, inspectNode{addr: n.Addr, role: n.Role, c: c})
	}
	if len(t.nodes) == 0 {
		return fmt.Errorf("the %s deployment has no master or replica to measure", t.spec)
	}
	return nil
}

// driverConfig is what the drivers connect to.
func (t *target) driverConfig(lease time.Duration) drivers.Config {
	cfg := drivers.Config{Topology: t.spec.Kind, Addrs: t.topo.Addrs(), Lease: lease, Conn: t.conn}
	if t.net != nil {
		cfg.Dialer = t.net.Dial
	}
	if t.spec.Kind == compose.KindSentinel {
		cfg.MasterName = t.masterName()
	}
	return cfg
}

func (t *target) masterName() string {
	switch {
	case t.desc.MasterName != "":
		return t.desc.MasterName
	case t.spec.MasterName != "":
		return t.spec.MasterName
	}
	return compose.DefaultMasterName
}

// info is the topology as the result file records it.
func (t *target) info() *results.Topology {
	ti := &results.Topology{Kind: t.spec.Kind, Spec: t.spec.String(), Provider: t.provider, Nodes: []results.TopologyNode{}}
	if t.spec.Kind == compose.KindSentinel {
		ti.MasterName = t.masterName()
	}
	for _, n := range t.desc.Nodes {
		ti.Nodes = append(ti.Nodes, results.TopologyNode{Addr: n.Addr, Role: n.Role})
	}
	if t.provider == providerAttached || t.secure != nil {
		ti.Connection = t.conn.Describe()
	}
	return ti
}

// masters returns the nodes that take writes.
func (t *target) masters() []inspectNode {
	var out []inspectNode
	for _, n := range t.nodes {
		if n.role != compose.RoleReplica {
			out = append(out, n)
		}
	}
	return out
}

// serverStats reads INFO commandstats and INFO cpu from every node, concurrently. Any node that
// does not answer fails the snapshot: totals missing a node would be quietly wrong.
func (t *target) serverStats(ctx context.Context) (results.ServerStats, error) {
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

func (n inspectNode) stats(ctx context.Context) (results.NodeStats, error) {
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	// Two INFO calls rather than one with two sections: Redis before 7 takes only one.
	resps := n.c.DoMulti(ctx,
		n.c.B().Info().Section("commandstats").Build(),
		n.c.B().Info().Section("cpu").Build())
	cmdText, err := resps[0].ToString()
	if err != nil {
		return results.NodeStats{}, fmt.Errorf("INFO commandstats on %s: %w", n.addr, err)
	}
	cpuText, err := resps[1].ToString()
	if err != nil {
		return results.NodeStats{}, fmt.Errorf("INFO cpu on %s: %w", n.addr, err)
	}
	cmds, err := results.ParseCommandStats(cmdText)
	if err != nil {
		return results.NodeStats{}, fmt.Errorf("%s: %w", n.addr, err)
	}
	cpu, err := results.ParseCPU(cpuText)
	if err != nil {
		return results.NodeStats{}, fmt.Errorf("%s: %w", n.addr, err)
	}
	ns := results.NodeStats{Addr: n.addr, Role: n.role, Commands: cmds, CPU: cpu}
	if err := n.refusalStats(ctx, &ns); err != nil { // run_refusals.go
		return results.NodeStats{}, fmt.Errorf("%s: %w", n.addr, err)
	}
	return ns, nil
}

// redisVersion returns the first node's redis_version, or "" if it cannot be read.
func (t *target) redisVersion(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	c := t.nodes[0].c
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

// close closes the connections and stops what lockbench started (an attached deployment's
// Close leaves it running).
func (t *target) close() {
	for _, n := range t.nodes {
		n.c.Close()
	}
	t.nodes = nil
	if t.net != nil {
		st := t.net.Stats()
		var dials int64
		for _, p := range st {
			dials += p.Dials
		}
		t.ui.line("network: %d client connections went through %d proxies", dials, len(st))
		t.net.Close()
	}
	t.topo.Close()
	t.removeSecure()
	if t.unpin != nil {
		t.unpin()
		t.unpin = nil
	}
}

// secureDesc says how a topology lockbench starts is protected, for the start line.
func (t *target) secureDesc() string {
	switch s := t.secure; {
	case s == nil:
		return ""
	case s.auth && s.tls:
		return ", an ACL user with a random password, TLS only"
	case s.auth:
		return ", an ACL user with a random password"
	}
	return ", TLS only"
}

// removeSecure deletes the password and certificates of a secure start.
func (t *target) removeSecure() {
	if t.secure != nil {
		if err := t.secure.remove(); err != nil {
			t.ui.line("warning: %v", err)
		}
	}
}

// deployment runs the preflight on every data node (package preflight); a node that does not
// answer is left out, with a warning.
func (t *target) deployment(ctx context.Context, concurrency int) *results.Deployment {
	d := &results.Deployment{Nodes: []results.DeploymentNode{}}
	for _, n := range t.nodes {
		ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
		node, err := preflight.Inspect(ctx, n.c, n.addr, n.role)
		cancel()
		if err != nil {
			d.Warnings = append(d.Warnings, t.conn.Redact(err.Error()))
			continue
		}
		d.Nodes = append(d.Nodes, node)
	}
	d.Warnings = append(d.Warnings, preflight.Warnings(d.Nodes, t.spec.Kind, concurrency)...)
	if t.spec.Kind == compose.KindSentinel {
		d.Warnings = append(d.Warnings, t.sentinelWarnings(ctx)...)
	}
	return d
}

// sentinelWarnings asks each sentinel lockbench was given how it monitors the master (its
// quorum); one that cannot be asked gets a warning saying so.
func (t *target) sentinelWarnings(ctx context.Context) []string {
	var w []string
	for _, addr := range t.topo.Addrs() {
		opt := rueidis.ClientOption{
			InitAddress:       []string{addr},
			ForceSingleClient: true,
			DisableCache:      true,
			DisableRetry:      true,
			ClientSetInfo:     rueidis.DisableClientSetInfo,
			Dialer:            net.Dialer{Timeout: inspectTimeout},
			ConnWriteTimeout:  inspectTimeout,
		}
		t.conn.RueidisSentinel(&opt, nil)
		c, err := rueidis.NewClient(opt)
		if err != nil {
			w = append(w, t.conn.Redact(fmt.Sprintf("%s: cannot ask the sentinel for its quorum: %v", addr, err)))
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
		sw, err := preflight.SentinelWarnings(ctx, c, addr, t.masterName())
		cancel()
		c.Close()
		if err != nil {
			w = append(w, t.conn.Redact(err.Error()))
		}
		w = append(w, sw...)
	}
	return w
}
