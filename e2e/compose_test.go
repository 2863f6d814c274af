package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/docker/dockertest"
)

// composeProject is one compose file brought up by a test under its own project name.
type composeProject struct {
	cmd     []string // docker compose, or docker-compose
	file    string
	project string
	env     []string
}

func (p *composeProject) run(t *testing.T, args ...string) string {
	t.Helper()
	full := append(append(p.cmd[1:], "-f", p.file, "-p", p.project), args...)
	c := exec.Command(p.cmd[0], full...)
	c.Env = append(os.Environ(), p.env...)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", p.cmd[0], strings.Join(full, " "), err, out)
	}
	return string(out)
}

// up starts the project and waits until every container with a health check is healthy:
// 'up -d --wait' with Compose v2; Compose v1 has no --wait, so the test waits the same way.
func (p *composeProject) up(t *testing.T) {
	t.Helper()
	if len(p.cmd) == 2 {
		p.run(t, "up", "-d", "--wait")
		return
	}
	p.run(t, "up", "-d")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := exec.Command("docker", "ps", "-a", "--filter", "label=com.docker.compose.project="+p.project,
			"--format", "{{.Names}}\t{{.Status}}").Output()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		waiting := ""
		for _, l := range lines {
			switch {
			case strings.Contains(l, "Exited"), strings.Contains(l, "(unhealthy)"):
				t.Fatalf("compose %s: %s\n%s", p.project, l, out)
			case strings.Contains(l, "health: starting"):
				waiting = l
			}
		}
		if waiting == "" && len(lines) > 0 && lines[0] != "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("compose %s not healthy in time: %s", p.project, waiting)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// down removes the project and checks that none of its containers or networks remain.
func (p *composeProject) down(t *testing.T) {
	t.Helper()
	p.run(t, "down", "--volumes", "--remove-orphans")
	filter := "label=com.docker.compose.project=" + p.project
	cs, _ := exec.Command("docker", "ps", "-aq", "--filter", filter).Output()
	ns, _ := exec.Command("docker", "network", "ls", "-q", "--filter", filter).Output()
	if len(strings.TrimSpace(string(cs)))+len(strings.TrimSpace(string(ns))) > 0 {
		t.Errorf("after down, project %s still has containers %q, networks %q", p.project, cs, ns)
	}
}

// requireFreePorts fails the test when a fixed port of a compose file is taken: the files
// publish sentinel and cluster on fixed loopback ports, as their comments say.
func requireFreePorts(t *testing.T, ports ...int) {
	t.Helper()
	for _, port := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d, which the compose file publishes, is taken: %v", port, err)
		}
		l.Close()
	}
}

// Each compose file, from the test image: up (and for cluster the init service that joins
// the nodes), lockbench run --addr against it with 0 violations and 0 errors, then down with
// nothing left.
func TestComposeFiles(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	cmd := dockertest.Compose(t)
	single := freePort(t)
	cases := []struct {
		file  string
		ports []int
		env   []string
		args  []string
	}{
		{"single.yml", nil, []string{"LOCKBENCH_REDIS_PORT=" + strconv.Itoa(single)},
			[]string{"--addr", "127.0.0.1:" + strconv.Itoa(single)}},
		{"sentinel.yml", []int{6380, 6381, 6382, 26379, 26380, 26381}, nil,
			[]string{"--topology", "sentinel", "--master-name", "mymaster", "--addr", "127.0.0.1:26379,127.0.0.1:26380,127.0.0.1:26381"}},
		{"cluster.yml", []int{7001, 7002, 7003, 7004, 7005, 7006}, nil,
			[]string{"--topology", "cluster", "--addr", "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004,127.0.0.1:7005,127.0.0.1:7006"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			requireFreePorts(t, tc.ports...)
			p := &composeProject{
				cmd:     cmd,
				file:    filepath.Join("..", "compose", tc.file),
				project: "lockbench-test-" + strconv.Itoa(os.Getpid()) + "-" + strings.TrimSuffix(tc.file, ".yml"),
				env:     append([]string{"LOCKBENCH_REDIS_IMAGE=" + image}, tc.env...),
			}
			downed := false
			t.Cleanup(func() {
				if !downed {
					p.down(t)
				}
			})
			if tc.file == "cluster.yml" {
				// The documented start: the one-shot init service starts the nodes, joins
				// them, and returns once every node reports cluster_state:ok.
				p.run(t, "run", "--rm", "init")
			} else {
				p.up(t)
			}

			dir := t.TempDir()
			errb := &syncBuffer{}
			args := append([]string{"run", "--driver", "lockcore,naive", "--concurrency", "8", "--keys", "1000",
				"--duration", "1s", "--warmup", "0s", "--out", dir}, tc.args...)
			code, out := finish(t, lockbench(t, errb, args...), errb)
			if code != exitOK {
				t.Fatalf("lockbench %v: exit %d\n%s\n%s", args, code, out, errb)
			}
			f := readResult(t, dir)
			if f.Topology.Provider != providerAttached || len(f.Runs) != 2 {
				t.Fatalf("result: topology %+v, %d runs", f.Topology, len(f.Runs))
			}
			for _, r := range f.Runs {
				if r.Violations != 0 || r.Errors != 0 || r.Acquisitions == 0 {
					t.Errorf("%s: %d violations, %d errors %v, %d acquisitions", r.Driver, r.Violations, r.Errors, r.ErrorsByKind, r.Acquisitions)
				}
			}
			t.Logf("%s:\n%s", tc.file, out)
			p.down(t)
			downed = true
		})
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
