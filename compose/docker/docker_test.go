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
)

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
		topo, err := Start(context.Background(), spec, Options{})
		if !errors.Is(err, ErrNoDocker) || topo != nil {
			t.Errorf("Start(%s) without Docker: topology %v, error %v; want nil and ErrNoDocker", text, topo, err)
		}
	}
}
