package docker

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowEngine serves, on a unix socket in a temp dir, an engine that answers everything but takes
// delay over 'docker info': a busy engine. It returns the socket's URL.
func slowEngine(t *testing.T, delay time.Duration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "slow.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/info"):
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
			w.Write([]byte(`{}`))
		case strings.HasSuffix(r.URL.Path, "/json") || strings.HasSuffix(r.URL.Path, "/networks"):
			w.Write([]byte(`[]`)) // no containers, no networks: nothing left behind
		default:
			w.Write([]byte(`{}`))
		}
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "unix://" + path
}

// TestSlowEngineHelper is what TestDiscoveryOutlivesAShortWait runs in a subprocess, whose
// testcontainers configuration (read once a process) names a slow engine.
func TestSlowEngineHelper(t *testing.T) {
	if os.Getenv("LOCKBENCH_SLOW_ENGINE_HELPER") != "1" {
		t.Skip("run by TestDiscoveryOutlivesAShortWait")
	}
	// A wait shorter than the engine's answer fails, as it should...
	err := AvailableWithin(context.Background(), 200*time.Millisecond)
	if !errors.Is(err, ErrNoDocker) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a 200ms wait for an engine answering in 1s: %v, want ErrNoDocker wrapping the deadline", err)
	}
	// ...and leaves no verdict behind: the next, longer wait finds the engine.
	if err := AvailableWithin(context.Background(), 30*time.Second); err != nil {
		t.Fatalf("a 30s wait for an engine answering in 1s, after a short wait: %v", err)
	}
	t.Log("slow engine found after a short wait")
}

// testcontainers keeps its discovery's outcome for the life of the process. A short wait for a
// busy engine must not make that outcome a failure: every later check and container start of
// the process would then fail at once, as fourteen e2e tests did in CI at 24a9510 after one
// 'docker info' that took more than 3 s.
func TestDiscoveryOutlivesAShortWait(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	props := "tc.host=" + slowEngine(t, time.Second) + "\n"
	if err := os.WriteFile(filepath.Join(home, ".testcontainers.properties"), []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSlowEngineHelper$", "-test.v")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DOCKER_HOST=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+home, "LOCKBENCH_SLOW_ENGINE_HELPER=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "slow engine found after a short wait") {
		t.Fatalf("the helper should find the slow engine after a short wait: %v\n%s", err, out)
	}
}
