//go:build unix

package e2e

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/compose/docker/dockertest"
)

// --auth --tls with --provider docker: every node of single, sentinel and cluster in a
// container that requires the ACL user and speaks TLS only (replication, sentinels and the
// cluster bus included: the topologies would not become ready otherwise), lockcore and a
// go-redis driver run clean on them, and the password is in none of what lockbench printed or
// wrote, nor in what docker inspect and docker logs show of the containers.
func TestRunSecureOnDocker(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	const drivers = "lockcore,redsync"
	for _, topology := range []string{"single", "sentinel", "cluster"} {
		t.Run(topology, func(t *testing.T) {
			t.Parallel()
			tmp, dir := t.TempDir(), t.TempDir()
			secret := watchSecret(t, tmp)
			errb := &syncBuffer{}
			cmd := lockbenchEnv(t, errb, []string{"TMPDIR=" + tmp}, "run", "--provider", "docker", "--image", image,
				"--topology", topology, "--auth", "--tls", "--driver", drivers,
				"--concurrency", "2", "--keys", "10", "--duration", "3s", "--warmup", "0s", "--out", dir)
			pid := cmd.Process.Pid
			t.Cleanup(func() { removeLeft(pid) })
			seen := containersWhileMeasuring(t, pid, errb)
			code, out := finish(t, cmd, errb)
			if code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
			}
			f := readResult(t, dir)
			everyDriverClean(t, f, drivers)
			c := f.Topology.Connection
			if f.Topology.Provider != providerDocker || c["auth"] != "user lockbench, password" || !strings.HasPrefix(c["tls"], "on") {
				t.Errorf("result's provider %q, connection %v", f.Topology.Provider, c)
			}
			if !strings.Contains(seen, docker.LabelPID) || !strings.Contains(seen, "/lockbench/redis.conf") {
				t.Errorf("docker inspect did not show the run's secure containers:\n%.500s", seen)
			}
			assertSecretNowhere(t, secret.Password(t), map[string]string{"stdout": out, "stderr": errb.String(), "docker inspect and logs": seen}, dir)
			assertNothingLeft(t, pid)
		})
	}
}

// containersWhileMeasuring waits until the lockbench run with that pid measures, then returns
// what docker inspect and docker logs say of the containers it started. The run must measure
// long enough for that: with 500 ms a driver, a loaded CI machine removed a container between
// docker ps and its docker logs.
func containersWhileMeasuring(t *testing.T, pid int, errb *syncBuffer) string {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(errb.String(), "[1/"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("lockbench did not start measuring:\n%s", errb)
		}
	}
	ids, err := exec.Command("docker", "ps", "-q", "--filter", "label="+docker.LabelPID+"="+strconv.Itoa(pid)).Output()
	if err != nil || len(strings.Fields(string(ids))) == 0 {
		t.Fatalf("docker ps: %v, containers %q", err, ids)
	}
	var b strings.Builder
	inspect, err := exec.Command("docker", append([]string{"inspect"}, strings.Fields(string(ids))...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker inspect: %v\n%s", err, inspect)
	}
	b.Write(inspect)
	for _, id := range strings.Fields(string(ids)) {
		logs, err := exec.Command("docker", "logs", id).CombinedOutput()
		if err != nil {
			t.Fatalf("docker logs %s: %v\n%s", id, err, logs)
		}
		b.Write(logs)
	}
	return b.String()
}
