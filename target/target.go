// Package target is the Redis deployment a lockbench run drives: a topology it starts (native
// redis-server processes or Docker containers, optionally with an ACL user and TLS) or one it
// attaches to by address. A Target keeps one plain connection per data node, apart from the
// drivers' clients, to read every node's statistics, run the preflight, measure the clock and
// clean the keyspace between runs.
package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/netem"
)

// Providers: who starts the topology, or that it was attached to.
const (
	ProviderNative   = "native"
	ProviderDocker   = "docker"
	ProviderAttached = "attached"
)

const (
	// InspectTimeout bounds one INFO, FLUSHALL or SCAN step on one node.
	InspectTimeout = 5 * time.Second
	// CleanTimeout bounds the key deletion between runs on an attached deployment, whose
	// keyspace may be large: past it Clean gives up with what it deleted.
	CleanTimeout = 60 * time.Second
)

// ErrBadSpec is wrapped by Open's errors that are bad input, for which nothing was run: a Spec
// that contradicts itself, a topology text or an attached deployment that does not match
// Spec.Topology, or a deployment that refuses the credentials, TLS, database or commands
// (conn.Refused). The error's text is the cause's own.
var ErrBadSpec = errors.New("target: bad spec")

// ErrNoMaster is returned by MeasureClock when the deployment has no master to read TIME from.
var ErrNoMaster = errors.New("target: no master")

// Spec says which deployment Open starts or attaches to. It is a plain value; its zero value
// starts a single native redis-server on a free loopback port.
type Spec struct {
	// Topology is the deployment's shape. A zero Kind means compose.KindSingle.
	Topology compose.Spec
	// Attach, if set, attaches to the deployment at its addresses with its credentials and
	// TLS instead of starting one; Provider, Image, Native, Auth, TLS and SecureDir must then
	// be zero.
	Attach *conn.Settings
	// Provider starts the topology: ProviderNative (the default, "") or ProviderDocker.
	Provider string
	// Image is the Redis image of ProviderDocker; default docker.DefaultImage.
	Image string
	// Native says where and how started servers run (Host, CPUs, ...); its Auth and TLS are
	// set by Auth and TLS, not given.
	Native compose.NativeOptions
	// Auth starts every node with an ACL user (SecureUser) and a random password; TLS starts
	// them TLS only, with a throwaway CA. The password and certificates live in SecureDir and
	// are removed by Close.
	Auth, TLS bool
	// SecureDir is where Auth and TLS keep their files; it must not exist, its parent must.
	// Default: a new directory under os.TempDir().
	SecureDir string
	// Net, if set, puts these network conditions between the drivers and Redis: DriverConfig's
	// dialer goes through in-process proxies (package netem).
	Net *netem.Conditions
	// Log receives progress lines (printf style, no newline); nil drops them.
	Log func(format string, a ...any)
	// OnStart, if set, is called with a topology Open started, before anything else can fail,
	// so that the caller can stop it from elsewhere (a second Ctrl-C) while Open goes on.
	OnStart func(compose.Topology)
	// OnConnected, if set, is called once every node is connected, before Net is put in place;
	// an error closes the target and is returned by Open. lockbench pins its own CPUs there:
	// after the servers started, so that they do not inherit the client's placement.
	OnConnected func() error
}

// Target is an open deployment: see the package doc. Its methods are safe for concurrent use;
// Close ends it.
type Target struct {
	spec      compose.Spec
	conn      *conn.Settings // the attached deployment's, or the secure start's; nil otherwise
	topo      compose.Topology
	provider  string
	desc      compose.Description
	nodes     []Node     // masters and replicas; sentinels hold no lock keys
	net       *netem.Net // nil dials directly
	secure    *Secure    // Auth, TLS on a started topology: removed by Close
	log       func(format string, a ...any)
	closeOnce sync.Once
	closeErr  error
}

// Open starts or attaches to the deployment s names and connects to each of its data nodes.
// ctx bounds the start or the attach. On error nothing Open started is left running.
func Open(ctx context.Context, s Spec) (*Target, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	t, err := open(ctx, s)
	if err != nil && isBadInput(err) {
		err = &badSpecError{err}
	}
	return t, err
}

func open(ctx context.Context, s Spec) (*Target, error) {
	if s.Topology.Kind == "" {
		s.Topology.Kind = compose.KindSingle
	}
	if s.Provider == "" {
		s.Provider = ProviderNative
	}
	t := &Target{spec: s.Topology, provider: s.Provider, conn: s.Attach, log: s.Log}
	if t.log == nil {
		t.log = func(string, ...any) {}
	}
	var err error
	if s.Attach != nil {
		t.provider = ProviderAttached
		t.topo, err = compose.AttachWith(ctx, s.Topology, t.conn)
	} else {
		native := s.Native
		if s.Auth || s.TLS {
			if t.secure, err = newSecureIn(s.SecureDir, s.Provider, s.Auth, s.TLS); err != nil {
				return nil, err
			}
			native.Auth, native.TLS = t.secure.Native.Auth, t.secure.Native.TLS
		}
		t.topo, err = Start(ctx, s.Provider, s.Image, s.Topology, native)
	}
	if err != nil {
		t.removeSecure()
		return nil, err
	}
	if s.OnStart != nil {
		s.OnStart(t.topo)
	}
	if t.secure != nil {
		if t.conn, err = t.secure.Settings(s.Topology, t.topo); err != nil {
			t.Close()
			return nil, err
		}
	}
	t.desc = t.topo.Describe()
	if t.provider != ProviderAttached {
		for _, n := range t.desc.Nodes {
			if pid := NodePid(t.topo, n.Addr); pid > 0 {
				t.log("redis-server pid %d on %s (%s)", pid, n.Addr, n.Role)
			}
		}
	}
	if err := t.connect(); err != nil {
		t.Close()
		return nil, err
	}
	if s.OnConnected != nil {
		if err := s.OnConnected(); err != nil {
			t.Close()
			return nil, err
		}
	}
	if c := s.Net; c != nil {
		t.net = netem.New(*c)
		t.log("network: %s between the clients and Redis (in-process proxies; a round trip gains %v)", c, c.RoundTrip())
	}
	return t, nil
}

// newSecureIn makes the secure start's files in dir, or in a new temporary directory.
func newSecureIn(dir, provider string, auth, tls bool) (*Secure, error) {
	if dir != "" {
		return NewSecure(dir, provider, auth, tls)
	}
	tmp, err := os.MkdirTemp("", "lockbench-secure-")
	if err != nil {
		return nil, err
	}
	os.Remove(tmp) // NewSecure makes it, 0700
	sec, err := NewSecure(tmp, provider, auth, tls)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return sec, nil
}

// NodePid returns the process id of the server started at addr, when the topology can tell:
// Single has Pid(), the multi-node topologies Pid(addr); 0 otherwise.
func NodePid(topo compose.Topology, addr string) int {
	switch p := topo.(type) {
	case interface{ Pid() int }:
		return p.Pid()
	case interface{ Pid(string) int }:
		return p.Pid(addr)
	}
	return 0
}

// Provider is ProviderNative or ProviderDocker for a topology Open started, ProviderAttached
// for one it attached to.
func (t *Target) Provider() string { return t.provider }

// Attached reports whether the deployment is one Open attached to: it is not lockbench's to
// flush, and only lockbench's own keys may be deleted on it.
func (t *Target) Attached() bool { return t.provider == ProviderAttached }

// Topology is the started or attached topology.
func (t *Target) Topology() compose.Topology { return t.topo }

// Spec is the deployment's shape as Open was given it (Kind filled in).
func (t *Target) Spec() compose.Spec { return t.spec }

// Description lists the deployment's nodes and their roles, as found when Open connected.
func (t *Target) Description() compose.Description { return t.desc }

// Conn is how clients connect: the attached deployment's settings, or those of a topology
// started with Auth or TLS; nil for a plain started topology (its methods take a nil receiver).
func (t *Target) Conn() *conn.Settings { return t.conn }

// Net is the network conditions' proxies (Spec.Net), or nil.
func (t *Target) Net() *netem.Net { return t.net }

// Secure is the secure start's files (Spec.Auth, Spec.TLS), or nil.
func (t *Target) Secure() *Secure { return t.secure }

// Close closes the connections and stops what Open started (an attached deployment is left
// running), then removes a secure start's files. It returns the topology's Close error; a
// second call does nothing.
func (t *Target) Close() error {
	t.closeOnce.Do(func() {
		for _, n := range t.nodes {
			n.Client.Close()
		}
		if t.net != nil {
			st := t.net.Stats()
			var dials int64
			for _, p := range st {
				dials += p.Dials
			}
			t.log("network: %d client connections went through %d proxies", dials, len(st))
			t.net.Close()
		}
		t.closeErr = t.topo.Close()
		t.removeSecure()
	})
	return t.closeErr
}

// removeSecure deletes the password and certificates of a secure start.
func (t *Target) removeSecure() {
	if t.secure != nil {
		if err := t.secure.Remove(); err != nil {
			t.log("warning: %v", err)
		}
	}
}

// check refuses a Spec that contradicts itself.
func (s Spec) check() error {
	switch s.Provider {
	case "", ProviderNative, ProviderDocker:
	default:
		return fmt.Errorf("%w: provider %q: want %s or %s", ErrBadSpec, s.Provider, ProviderNative, ProviderDocker)
	}
	if s.Attach != nil && (s.Provider != "" || s.Image != "" || s.Auth || s.TLS || s.SecureDir != "") {
		return fmt.Errorf("%w: an attached deployment is not started: no provider, image, auth, TLS or secure dir", ErrBadSpec)
	}
	if s.Native.Auth != nil || s.Native.TLS != nil {
		return fmt.Errorf("%w: Native.Auth and Native.TLS come from Auth and TLS, whose files Open makes", ErrBadSpec)
	}
	return nil
}

// isBadInput reports whether an error of open is bad input (see ErrBadSpec).
func isBadInput(err error) bool {
	return errors.Is(err, compose.ErrBadSpec) || errors.Is(err, compose.ErrTopologyMismatch) || conn.Refused(err)
}

// badSpecError marks a cause as bad input without changing its text.
type badSpecError struct{ err error }

func (e *badSpecError) Error() string   { return e.err.Error() }
func (e *badSpecError) Unwrap() []error { return []error{ErrBadSpec, e.err} }
