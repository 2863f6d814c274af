// Package docker starts the topologies of package compose as containers of a Redis image
// (the official redis:7 by default, or the one BuildImage makes from this machine's Redis),
// with testcontainers-go. The native provider (package compose) stays the default: it needs
// no engine and starts in milliseconds.
//
// Options.Auth and Options.TLS start every node with an ACL user and TLS only, as the native
// provider's NativeAuth and NativeTLS do, with the secrets copied into the containers as files.
//
// Limits, kept on purpose to keep this small:
//   - The engine must be local.
//   - single and masters:N publish each container's port on 127.0.0.1 (any engine, Docker
//     Desktop included). cluster uses host networking, so that the addresses nodes announce
//     to each other are the ones clients dial. sentinel runs on two private bridge networks
//     and clients dial the containers' addresses on them, which is what lets Partition cut
//     the master off. Both need a Linux engine on the same machine.
//   - Host ports for cluster are picked free on the host just before the containers bind
//     them; another process may take one first, and the start then fails.
//   - Containers and networks carry lockbench's labels (LabelOwner, LabelPID, LabelTopology).
//     Close removes them; Start first removes those of lockbench processes that died without
//     closing (Reap). testcontainers' reaper (Ryuk) is off, since its image cannot be pulled
//     without a registry; TESTCONTAINERS_RYUK_DISABLED=false turns it back on.
package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/google/uuid"
	"github.com/lockbench/lockbench/compose"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/wait"
)

// DefaultImage is the Redis image nodes run when Options.Image is empty: the official one,
// as users with Docker have it (or pull it).
const DefaultImage = "redis:7"

// Options configures Start. The zero value runs DefaultImage.
type Options struct {
	// Image is the Redis 7 image every node runs. It needs redis-server and redis-cli in
	// PATH; LocalImage, built by BuildImage, has them.
	Image string
	// Auth, if set, makes every node require an ACL user (see Auth).
	Auth *Auth
	// TLS, if set, makes every node serve TLS only (see TLS).
	TLS *TLS
	// CPUs, if set, is the cpuset every node's container runs on (docker run --cpuset-cpus),
	// e.g. "1" or "2-3": see package pin.
	CPUs string
}

const (
	// redisPort is the port redis-server listens on inside a container with its own network.
	redisPort = "6379/tcp"
	// nodeStartTimeout bounds one container's start, image pull included.
	nodeStartTimeout = 2 * time.Minute
	// readyTimeout bounds the wait for a sentinel or cluster topology to settle once its
	// containers run (replicas synced, sentinels agreed, slots assigned).
	readyTimeout = time.Minute
	// pollInterval spaces readiness probes.
	pollInterval = 100 * time.Millisecond
	// closeTimeout bounds the removal of all containers in Close.
	closeTimeout = time.Minute
)

// hostNetworkHint explains the usual reason a host-network topology never becomes reachable.
const hostNetworkHint = "sentinel and cluster use host networking: they need a Linux Docker engine, or Docker Desktop with host networking enabled"

// loopback is where published ports and host-network nodes listen: nodes without Auth have no
// password.
var loopback = netip.MustParseAddr("127.0.0.1")

// serverArgs are the settings of every redis-server node, as the native provider uses them:
// no persistence, and protected mode off since only loopback can reach the node anyway.
var serverArgs = []string{"--save", "", "--appendonly", "no", "--protected-mode", "no",
	// A master waits this long for more replicas before a diskless full sync (default 5 s in
	// Redis 7); without this, replicas hold no data for the first seconds of a run.
	"--repl-diskless-sync-delay", "0"}

// Topology is a deployment of Redis containers started by Start. Its methods are safe for
// concurrent use.
type Topology struct {
	kind  string
	image string
	cpus  string // Options.CPUs
	id    string // LabelTopology's value
	addrs []string
	desc  compose.Description
	sec   secure // Options.Auth and Options.TLS
	probe probe  // how Start's probes reach the nodes

	// sentinel's networks and which node addresses belong to which container (Partition).
	nets      []string
	byAddr    map[string]testcontainers.Container
	masterNet string
	peersNet  string

	mu         sync.Mutex
	containers []testcontainers.Container

	failed    bool // Start failed: Close waits for late containers (settle)
	closeOnce sync.Once
	closeErr  error
}

var _ compose.Topology = (*Topology)(nil)

// Start checks with Available that a Docker engine answers (failing fast with an error wrapping
// ErrNoDocker otherwise), then starts the topology spec names from opts.Image and waits until
// it serves: single and masters:N answer PING, sentinel's sentinels agree on the master and
// its replicas, cluster's slots are all assigned. ctx bounds only the start, image pulls
// included. On failure every container and network started is removed. Start is safe for
// concurrent use; each call starts its own containers.
func Start(ctx context.Context, spec compose.Spec, opts Options) (*Topology, error) {
	if err := Available(ctx); err != nil {
		return nil, err
	}
	if opts.Image == "" {
		opts.Image = DefaultImage
	}
	sec, err := newSecure(opts)
	if err != nil {
		return nil, err
	}
	// What killed runs left behind; failing to remove it does not stop this start.
	Reap(ctx)
	t := &Topology{kind: spec.Kind, image: opts.Image, cpus: opts.CPUs, id: uuid.NewString(), sec: sec, probe: sec.probe()}
	switch spec.Kind {
	case compose.KindSingle:
		err = t.startMasters(ctx, 1)
	case compose.KindMasters:
		err = t.startMasters(ctx, spec.Masters)
	case compose.KindSentinel:
		name := spec.MasterName
		if name == "" {
			name = compose.DefaultMasterName
		}
		err = t.startSentinel(ctx, name)
	case compose.KindCluster:
		err = t.startCluster(ctx)
	default:
		err = fmt.Errorf("%w %q: want single, sentinel, cluster or masters:N", compose.ErrBadSpec, spec.Kind)
	}
	if err != nil {
		t.failed = true
		t.Close()
		return nil, fmt.Errorf("docker: start %s: %w%s", spec, err, missingImageHint(ctx, opts.Image))
	}
	return t, nil
}

// missingImageHint explains a failed start whose image is not on the engine: it could not be
// pulled, which on a machine without a registry is expected, and there is a way out.
func missingImageHint(ctx context.Context, image string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AvailableTimeout)
	defer cancel()
	cli, err := newClient(ctx)
	if err != nil {
		return ""
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, image); !cerrdefs.IsNotFound(err) {
		return ""
	}
	return fmt.Sprintf(" (image %s is not on this Docker engine and could not be pulled; where no registry is reachable, build one from this machine's redis-server with 'lockbench image build' and pass --image %s)", image, LocalImage)
}

// startMasters starts n standalone servers, each in its own container with its port published
// on loopback.
func (t *Topology) startMasters(ctx context.Context, n int) error {
	port := network.MustParsePort(redisPort)
	for range n {
		cmd, opts := t.sec.server(int(port.Num()), false)
		c, err := t.run(ctx, wait.ForLog("Ready to accept connections"), append(opts,
			testcontainers.WithCmd(cmd...),
			testcontainers.WithExposedPorts(redisPort),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				hc.PortBindings = network.PortMap{port: {{HostIP: loopback, HostPort: "0"}}}
			}),
		)...)
		if err != nil {
			return err
		}
		mapped, err := c.MappedPort(ctx, redisPort)
		if err != nil {
			return err
		}
		addr := net.JoinHostPort(loopback.String(), mapped.Port())
		if _, err := t.probe.command(ctx, addr, "PING"); err != nil {
			return fmt.Errorf("published port %s: %w", addr, err)
		}
		t.addrs = append(t.addrs, addr)
		t.desc.Nodes = append(t.desc.Nodes, compose.Node{Addr: addr, Role: compose.RoleMaster})
	}
	t.desc.Kind = t.kind
	return nil
}

// runHost starts a container on the host's network whose command listens on a loopback port.
func (t *Topology) runHost(ctx context.Context, ready *wait.LogStrategy, cmd []string, opts ...testcontainers.ContainerCustomizer) (testcontainers.Container, error) {
	opts = append(opts,
		testcontainers.WithCmd(cmd...),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.NetworkMode = "host" }),
	)
	return t.run(ctx, ready, opts...)
}

// labels are the labels of every resource of t.
func (t *Topology) labels() map[string]string {
	return map[string]string{LabelOwner: "1", LabelPID: strconv.Itoa(os.Getpid()), LabelTopology: t.id}
}

// run starts one container of t's image and records it for Close, even when the start failed
// half-way: testcontainers returns what it created.
func (t *Topology) run(ctx context.Context, ready *wait.LogStrategy, opts ...testcontainers.ContainerCustomizer) (testcontainers.Container, error) {
	ctx, cancel := context.WithTimeout(ctx, nodeStartTimeout)
	defer cancel()
	// Our errors carry what matters; testcontainers' per-container chatter would bury the
	// lines lockbench up prints.
	opts = append([]testcontainers.ContainerCustomizer{testcontainers.WithLogger(tclog.NewNoopLogger())}, opts...)
	opts = append(opts,
		testcontainers.WithLabels(t.labels()),
		testcontainers.WithWaitStrategy(ready.WithStartupTimeout(nodeStartTimeout)))
	if t.cpus != "" {
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.CpusetCpus = t.cpus }))
	}
	c, err := testcontainers.Run(ctx, t.image, opts...)
	if c != nil {
		t.mu.Lock()
		t.containers = append(t.containers, c)
		t.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// freePorts returns n distinct free TCP ports on loopback. They are free only until someone
// else binds them; the listeners are held until all are picked so the n differ.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(loopback.String(), "0"))
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func loopbackAddr(port int) string { return net.JoinHostPort(loopback.String(), strconv.Itoa(port)) }

// settleQuiet is how long Close of a failed start keeps finding nothing of the topology
// before it trusts that no cancelled create is still completing.
const settleQuiet = 2 * time.Second

// settle removes what of t appears in the engine until nothing has for settleQuiet.
func (t *Topology) settle(ctx context.Context) error {
	quietSince := time.Now()
	for time.Since(quietSince) < settleQuiet {
		cs, ns, err := Resources(ctx, LabelTopology+"="+t.id)
		if err != nil {
			return err
		}
		if len(cs)+len(ns) > 0 {
			if err := removeLabelled(ctx, LabelTopology+"="+t.id); err != nil {
				return err
			}
			quietSince = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
	return nil
}

// ID returns the topology's id, the value of LabelTopology on its containers and networks. It
// is safe for concurrent use.
func (t *Topology) ID() string { return t.id }

// Kind returns the topology kind, e.g. compose.KindCluster. It is safe for concurrent use.
func (t *Topology) Kind() string { return t.kind }

// Addrs returns the addresses clients dial (the sentinels for sentinel) in a slice the caller
// owns. It is safe for concurrent use.
func (t *Topology) Addrs() []string { return append([]string(nil), t.addrs...) }

// Describe returns every node and its role. It is safe for concurrent use.
func (t *Topology) Describe() compose.Description {
	d := t.desc
	d.Nodes = append([]compose.Node(nil), t.desc.Nodes...)
	return d
}

// Close removes every container of the topology, then its networks, and waits until they are
// gone (at most a minute). Containers go concurrently, except on a topology with networks of
// its own (sentinel), whose containers go one at a time: Docker 20.10, removing several
// containers of one network at once, once lost count of the network's endpoints, and the
// network could then never be removed ("has active endpoints" with no container on it). It is
// idempotent and safe for concurrent use: later calls wait for the first and return its result.
func (t *Topology) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		cs := t.containers
		sequential := t.kind == compose.KindSentinel
		t.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		errs := make([]error, len(cs))
		var wg sync.WaitGroup
		for i, c := range cs {
			if sequential {
				errs[i] = c.Terminate(ctx)
				continue
			}
			wg.Go(func() { errs[i] = c.Terminate(ctx) })
		}
		wg.Wait()
		// Networks, and anything of this topology Terminate did not know about.
		errs = append(errs, removeLabelled(ctx, LabelTopology+"="+t.id))
		if t.failed {
			// A create request cancelled with the start may still complete in the engine
			// after the removal above listed nothing; look again until a quiet spell.
			errs = append(errs, t.settle(ctx))
		}
		if err := errors.Join(errs...); err != nil {
			t.closeErr = fmt.Errorf("docker: remove containers: %w", err)
		}
	})
	return t.closeErr
}
