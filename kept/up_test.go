package kept

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/target"
)

// needRedis skips a test that starts redis-server when it is missing (and fails it in CI).
func needRedis(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not on PATH (CI must install it: scripts/install-deps.sh)")
		}
		t.Skip("redis-server not on PATH; install it with scripts/install-deps.sh")
	}
}

// An Up with an ACL user and TLS: its state file says how to connect without the password,
// its node answers; Stop of its file from a process that is not lockbench up (this test) finds
// the up gone and stops the leftover node; Close removes the secrets and the file.
func TestUpLifecycle(t *testing.T) {
	t.Parallel()
	needRedis(t)
	dir := filepath.Join(t.TempDir(), "state")
	spec, err := compose.ParseSpec("masters:2")
	if err != nil {
		t.Fatal(err)
	}
	u, err := NewUp(UpOptions{Dir: dir, Name: "sec", Provider: target.ProviderNative, Topology: spec, Auth: true, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	st, err := Read(Path(dir, "sec"))
	if err != nil || st.Pid != os.Getpid() || st.Topology != "masters:2" || st.Description != nil {
		t.Fatalf("state after NewUp = %+v, %v; want this process's claim, still starting", st, err)
	}
	if err := u.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, err = u.Publish()
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := Read(Path(dir, "sec"))
	if err != nil || onDisk.Description == nil || len(onDisk.Description.Nodes) != 2 || len(onDisk.NodePids) != 2 ||
		len(onDisk.Addrs) != 2 || onDisk.Ready.IsZero() || onDisk.Secure == nil {
		t.Fatalf("state after Publish = %+v, %v", onDisk, err)
	}
	sec := onDisk.Secure
	if !sec.TLS || sec.User != target.SecureUser || !strings.HasPrefix(sec.PasswordFile, SecretsPath(dir, "sec")) ||
		!strings.HasPrefix(sec.CAFile, SecretsPath(dir, "sec")) {
		t.Errorf("secure = %+v; want the user and TLS, their files under %s", sec, SecretsPath(dir, "sec"))
	}
	password, err := os.ReadFile(sec.PasswordFile)
	if err != nil || len(strings.TrimSpace(string(password))) == 0 {
		t.Fatalf("password file: %q, %v", password, err)
	}
	raw, _ := os.ReadFile(Path(dir, "sec"))
	if pw := strings.TrimSpace(string(password)); strings.Contains(string(raw), pw) || strings.Contains(st.RunLine(), pw) {
		t.Error("the password is in the state file or the run line")
	}
	for _, n := range onDisk.Description.Nodes {
		if err := Ping(n.Addr, 2*time.Second, true); err != nil {
			t.Errorf("PING %s over TLS: %v", n.Addr, err)
		}
	}

	// This test process is not lockbench up: to Stop, the up is gone and its nodes are left over.
	s, err := Stop(Path(dir, "sec"), 10*time.Second)
	if err != nil || s.Outcome != Stale || !strings.HasSuffix(s.String(), "; stopped 2 leftover node processes") {
		t.Fatalf("Stop = %q, %v; want the stale state removed and 2 leftover nodes stopped", s, err)
	}
	for _, pid := range onDisk.NodePids {
		// The nodes are this test process's children: one that exited stays a zombie until the
		// goroutine waiting for it reaps it, and kill(pid, 0) finds a zombie. NodeAlive, which
		// Stop waited on, does not count one (a zombie has no command line).
		if NodeAlive(onDisk, pid) {
			t.Errorf("node process %d still runs after Stop", pid)
		}
	}
	u.Stop() // the nodes are gone already; whatever Close says of that is not under test
	u.Close()
	for _, p := range []string{Path(dir, "sec"), SecretsPath(dir, "sec")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Close: %v", p, err)
		}
	}
}

// Abandon removes the files of an Up and leaves its topology running: what a second Ctrl-C
// does before the process quits at once.
func TestUpAbandon(t *testing.T) {
	t.Parallel()
	needRedis(t)
	dir := t.TempDir()
	u, err := NewUp(UpOptions{Dir: dir, Name: "a", Provider: target.ProviderNative, Topology: compose.Spec{Kind: compose.KindSingle}, Auth: true})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if err := u.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, err := u.Publish()
	if err != nil {
		t.Fatal(err)
	}
	u.Abandon()
	for _, p := range []string{Path(dir, "a"), SecretsPath(dir, "a")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Abandon: %v", p, err)
		}
	}
	if err := Ping(st.Addrs[0], 2*time.Second, false); err != nil {
		t.Errorf("the node after Abandon: %v; want it still running", err)
	}
	if err := u.Stop(); err != nil {
		t.Errorf("Stop after Abandon: %v", err)
	}
	if err := Ping(st.Addrs[0], 300*time.Millisecond, false); err == nil {
		t.Error("the node answers after Stop")
	}
}

// A start that fails leaves nothing once Close ran: no state file, no secrets.
func TestUpStartFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	u, err := NewUp(UpOptions{Dir: dir, Name: "f", Provider: target.ProviderNative, Topology: compose.Spec{Kind: compose.KindSingle}, TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := u.Start(ctx); err == nil {
		t.Fatal("Start with a canceled context: no error")
	}
	if err := u.Stop(); err != nil {
		t.Errorf("Stop of a topology that never started: %v", err)
	}
	u.Close()
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("files left after a failed start and Close: %v", files)
	}
}
