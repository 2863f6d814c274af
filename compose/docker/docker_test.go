package docker

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"go.uber.org/goleak"
)

// TestMain fails the run if a goroutine outlives the tests: a failed Available must not leave
// a client, reaper or log follower behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// closedSocket returns DOCKER_HOST for a unix socket in a temp dir that exists but has no
// listener: what a machine with the docker CLI and a stopped daemon looks like.
func closedSocket(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("socket file should remain after close: %v", err)
	}
	return "unix://" + path
}

func TestAvailableClosedSocket(t *testing.T) {
	t.Setenv("DOCKER_HOST", closedSocket(t))
	start := time.Now()
	err := Available(context.Background())
	if !errors.Is(err, ErrNoDocker) {
		t.Fatalf("Available with DOCKER_HOST at a closed socket: %v, want ErrNoDocker", err)
	}
	// A refused connection is reported at once, not after the timeout.
	if d := time.Since(start); d >= AvailableTimeout {
		t.Errorf("Available took %v for a refused connection; it should not wait for its timeout", d)
	}
	for _, want := range []string{"no Docker engine reachable", "DOCKER_HOST=unix://", "use the native provider"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A DOCKER_HOST that accepts connections and never answers must not hang Available: its
// timeout, or the caller's shorter deadline, ends the wait.
func TestAvailableSilentEngineIsBounded(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for c := range accepted {
			c.Close()
		}
	})
	t.Setenv("DOCKER_HOST", "tcp://"+l.Addr().String())

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Available(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNoDocker) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Available against a silent engine: %v, want ErrNoDocker wrapping the deadline", err)
		}
	case <-time.After(AvailableTimeout + 5*time.Second):
		t.Fatal("Available did not return after its deadline")
	}
}

func TestStartFailsFastWithoutDocker(t *testing.T) {
	t.Setenv("DOCKER_HOST", closedSocket(t))
	for _, text := range []string{"single", "masters:2", "sentinel", "cluster"} {
		spec, err := compose.ParseSpec(text)
		if err != nil {
			t.Fatal(err)
		}
		topo, err := Start(context.Background(), spec)
		if !errors.Is(err, ErrNoDocker) || topo != nil {
			t.Errorf("Start(%s) without Docker: topology %v, error %v; want nil and ErrNoDocker", text, topo, err)
		}
	}
}

// requireDocker skips a test when no Docker engine answers: the one skip lockbench allows,
// since a Docker engine is optional (the native provider is the default), also under CI.
func requireDocker(t *testing.T) {
	t.Helper()
	if err := Available(context.Background()); err != nil {
		t.Skip(err)
	}
}

func TestStartOnDocker(t *testing.T) {
	requireDocker(t)
	cases := []struct {
		spec      string
		nodes     int
		addrs     int
		roles     map[string]int
		masterArg string
	}{
		{"single", 1, 1, map[string]int{compose.RoleMaster: 1}, ""},
		{"masters:3", 3, 3, map[string]int{compose.RoleMaster: 3}, ""},
		{"sentinel", 6, 3, map[string]int{compose.RoleMaster: 1, compose.RoleReplica: 2, compose.RoleSentinel: 3}, "orders"},
		{"cluster", 6, 6, map[string]int{compose.RoleMaster: 3, compose.RoleReplica: 3}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			spec, err := compose.ParseSpec(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			spec.MasterName = tc.masterArg
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			topo, err := Start(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			t.Cleanup(func() {
				if !closed {
					topo.Close()
				}
			})
			d := topo.Describe()
			if d.Kind != spec.Kind || len(d.Nodes) != tc.nodes || len(topo.Addrs()) != tc.addrs {
				t.Fatalf("Describe %+v, Addrs %v: want kind %s, %d nodes, %d addrs", d, topo.Addrs(), spec.Kind, tc.nodes, tc.addrs)
			}
			roles := map[string]int{}
			for _, n := range d.Nodes {
				roles[n.Role]++
				if !strings.HasPrefix(n.Addr, "127.0.0.1:") {
					t.Errorf("node %s is not on loopback", n.Addr)
				}
				if reply, err := command(ctx, n.Addr, "PING"); err != nil || reply != "PONG" {
					t.Errorf("PING %s (%s): %q, %v", n.Addr, n.Role, reply, err)
				}
			}
			for role, n := range tc.roles {
				if roles[role] != n {
					t.Errorf("%d nodes with role %s, want %d (%v)", roles[role], role, n, d.Nodes)
				}
			}
			if spec.Kind == compose.KindSentinel && d.MasterName != tc.masterArg {
				t.Errorf("master name %q, want %q", d.MasterName, tc.masterArg)
			}
			if spec.Kind == compose.KindCluster {
				if _, err := command(ctx, topo.Addrs()[0], "SET", "{k}a", "1"); err != nil && !strings.Contains(err.Error(), "MOVED") {
					t.Errorf("SET on the cluster: %v", err)
				}
			}
			if err := topo.Close(); err != nil {
				t.Fatal(err)
			}
			closed = true
			for _, n := range d.Nodes {
				if _, err := command(context.Background(), n.Addr, "PING"); err == nil {
					t.Errorf("%s still answers after Close", n.Addr)
				}
			}
		})
	}
}
