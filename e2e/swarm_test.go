package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker/dockertest"
	"github.com/lockbench/lockbench/generators"
	"github.com/lockbench/lockbench/generators/generatorstest"
	"github.com/lockbench/lockbench/results"
)

// dockerCLI runs the docker CLI and returns its combined output.
func dockerCLI(ctx context.Context, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// swarmNode makes this engine a single-node swarm manager for the test, on loopback only, unless
// it already is in a swarm, and returns the gateway address of docker_gwbridge, the bridge
// through which a swarm task reaches this host. At the end it leaves the engine as it found it:
// it leaves a swarm it created, and removes docker_gwbridge if the swarm created it.
func swarmNode(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	if _, err := exec.LookPath("docker"); err != nil {
		if dockertest.InCI() {
			t.Fatal("CI is set but the docker CLI is not installed: the Swarm test must run")
		}
		t.Skip("skipping: the Swarm test needs the docker CLI")
	}
	state, err := dockerCLI(ctx, nil, "info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}")
	if err != nil {
		t.Fatalf("docker info: %v: %s", err, state)
	}
	_, gwErr := dockerCLI(ctx, nil, "network", "inspect", "docker_gwbridge")
	hadGWBridge := gwErr == nil
	removeGWBridge := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// The bridge goes once the engine has let go of the swarm's endpoints on it.
		var out string
		var err error
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			if out, err = dockerCLI(ctx, nil, "network", "rm", "docker_gwbridge"); err == nil || strings.Contains(out, "No such network") || strings.Contains(out, "not found") {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("docker network rm docker_gwbridge (created by this test): %v: %s", err, out)
				return
			}
		}
	}
	switch state {
	case "active true":
		t.Log("the engine is already a swarm manager: using its swarm, leaving it as it is")
	case "inactive false":
		if !hadGWBridge {
			// The swarm would make it at its first task, after the test needs its address: make
			// it now, with the options the swarm gives it.
			out, err := dockerCLI(ctx, nil, "network", "create", "--driver", "bridge",
				"--opt", "com.docker.network.bridge.name=docker_gwbridge",
				"--opt", "com.docker.network.bridge.enable_icc=false",
				"--opt", "com.docker.network.bridge.enable_ip_masquerade=true",
				"docker_gwbridge")
			if err != nil {
				t.Fatalf("docker network create docker_gwbridge: %v: %s", err, out)
			}
			t.Cleanup(removeGWBridge) // runs after the swarm's leave, registered below
		}
		if out, err := dockerCLI(ctx, nil, "swarm", "init", "--advertise-addr", "127.0.0.1", "--listen-addr", "127.0.0.1:2377"); err != nil {
			t.Fatalf("docker swarm init: %v: %s", err, out)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if out, err := dockerCLI(ctx, nil, "swarm", "leave", "--force"); err != nil {
				t.Errorf("docker swarm leave --force: %v: %s", err, out)
			}
		})
	default:
		t.Fatalf("the engine's swarm state is %q: want inactive (the test makes a swarm) or an active manager", state)
	}
	out, err := dockerCLI(ctx, nil, "network", "inspect", "docker_gwbridge", "--format", "{{range .IPAM.Config}}{{.Gateway}} {{end}}")
	if err != nil {
		t.Fatalf("docker_gwbridge: %v: %s", err, out)
	}
	for _, gw := range strings.Fields(out) {
		if !strings.Contains(gw, ":") {
			return gw
		}
	}
	t.Fatalf("docker_gwbridge has no IPv4 gateway (%q)", out)
	return ""
}

// TestSwarmStack deploys deploy/swarm/lockbench-stack.yml on a single-node swarm: three
// generator tasks of the lockbench image against a redis-server this test starts, each taking
// its index from its task slot and handing its result back through a second redis-server, not
// a volume; 'lockbench merge --from' then finds exactly the three, and the merged acquisitions
// are their sum. The stack, its network and any swarm state the test made are removed.
func TestSwarmStack(t *testing.T) {
	image := generatorstest.Image(t)
	gw := swarmNode(t)
	ctx := context.Background()
	// Both servers listen on the host's address on docker_gwbridge, which the tasks reach.
	data, err := compose.StartSingle(ctx, compose.NativeOptions{Host: gw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { data.Close() })
	store, err := compose.StartSingle(ctx, compose.NativeOptions{Host: gw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })

	const procs = 3
	stack := "lockbench-test-" + generators.NewRunID()
	runID := "swarm-" + generators.NewRunID()
	env := []string{
		"LOCKBENCH_IMAGE=" + image,
		"PROCS=" + strconv.Itoa(procs),
		"REDIS_ADDR=" + data.Addr(),
		"COLLECT_ADDR=" + store.Addr(),
		"RUN_ID=" + runID,
		// Far enough ahead for the swarm to schedule and start three containers.
		"START_AT=" + time.Now().Add(10*time.Second).UTC().Format(time.RFC3339Nano),
		"DURATION=1s", "WARMUP=200ms", "CONCURRENCY=4", "DRIVER=lockcore",
	}
	file := filepath.Join("..", "deploy", "swarm", "lockbench-stack.yml")
	if out, err := dockerCLI(ctx, env, "stack", "deploy", "--resolve-image", "never", "-c", file, stack); err != nil {
		t.Fatalf("docker stack deploy: %v: %s", err, out)
	}
	t.Cleanup(func() { removeStack(t, stack) })

	service := stack + "_generator"
	var states []string
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		out, err := dockerCLI(ctx, nil, "service", "ps", service, "--format", "{{.CurrentState}}")
		if err != nil {
			t.Fatalf("docker service ps: %v: %s", err, out)
		}
		states = strings.Split(out, "\n")
		done := 0
		for _, s := range states {
			switch {
			case strings.HasPrefix(s, "Complete"):
				done++
			case strings.HasPrefix(s, "Failed"), strings.HasPrefix(s, "Rejected"), strings.HasPrefix(s, "Shutdown"):
				logs, _ := dockerCLI(ctx, nil, "service", "logs", "--raw", service)
				t.Fatalf("a generator task ended %q; tasks %q; logs:\n%s", s, states, logs)
			}
		}
		if done == procs && len(states) == procs {
			break
		}
		if time.Now().After(deadline) {
			logs, _ := dockerCLI(ctx, nil, "service", "logs", "--raw", service)
			t.Fatalf("tasks %q after 2 minutes; logs:\n%s", states, logs)
		}
	}

	out := filepath.Join(t.TempDir(), "merged.json")
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "merge", "--from", store.Addr(), "--run", runID, "--expect", strconv.Itoa(procs), "-o", out)
	if code, stdout := finish(t, cmd, errb); code != exitOK {
		t.Fatalf("lockbench merge --from: exit %d\n%s\n%s", code, stdout, errb)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 1 || f.Runs[0].Fleet == nil || len(f.Runs[0].Fleet.Processes) != procs {
		t.Fatalf("merged %d runs; want 1 of %d processes", len(f.Runs), procs)
	}
	r := f.Runs[0]
	var sum int64
	hosts := map[string]bool{}
	for i, p := range r.Fleet.Processes {
		sum += p.Acquisitions
		hosts[p.Host] = true
		if p.Index != i {
			t.Errorf("process %d has index %d: want the task slots 1 to %d as indexes 0 to %d", i, p.Index, procs, procs-1)
		}
	}
	if r.Acquisitions == 0 || r.Acquisitions != sum || r.Violations != 0 || r.Errors != 0 || !r.Complete || len(hosts) != procs {
		t.Errorf("merged %d acquisitions (processes %d), %d violations, %d errors, complete %v, hosts %v", r.Acquisitions, sum, r.Violations, r.Errors, r.Complete, hosts)
	}
}

// removeStack removes the stack and waits until its containers and network are gone.
func removeStack(t *testing.T, stack string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := dockerCLI(ctx, nil, "stack", "rm", stack); err != nil {
		t.Errorf("docker stack rm %s: %v: %s", stack, err, out)
		return
	}
	for {
		cs, _ := dockerCLI(ctx, nil, "ps", "-aq", "--filter", "label=com.docker.stack.namespace="+stack)
		ns, _ := dockerCLI(ctx, nil, "network", "ls", "-q", "--filter", "label=com.docker.stack.namespace="+stack)
		if cs == "" && ns == "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Errorf("stack %s still has containers %q and networks %q", stack, cs, ns)
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}
