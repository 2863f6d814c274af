package dockertest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequireHelper is what the subprocesses of TestRequireWithoutEngine run.
func TestRequireHelper(t *testing.T) {
	if os.Getenv("DOCKERTEST_HELPER") != "1" {
		t.Skip("run by TestRequireWithoutEngine")
	}
	Require(t)
	t.Log("engine found")
}

// Without an engine, Require skips with the reason outside CI and fails under CI.
func TestRequireWithoutEngine(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close() // the socket file stays, with no one listening: a stopped daemon
	for _, tc := range []struct {
		ci       string
		wantFail bool
		want     string
	}{
		{"", false, "skipping: this test needs a Docker engine"},
		{"false", false, "skipping: this test needs a Docker engine"},
		{"true", true, "CI is set but no Docker engine answers"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestRequireHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "DOCKERTEST_HELPER=1", "DOCKER_HOST=unix://"+sock, "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.wantFail || !strings.Contains(string(out), tc.want) {
			t.Errorf("CI=%q: error %v, output:\n%s\nwant failed=%v and %q", tc.ci, err, out, tc.wantFail, tc.want)
		}
	}
}
