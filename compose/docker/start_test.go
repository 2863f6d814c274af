package docker_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/compose/docker/dockertest"
	"github.com/lockbench/lockbench/internal/testparallel"
	"go.uber.org/goleak"
)

// TestMain fails the run if a goroutine outlives the tests (a failed Available must not leave
// a client or log follower behind), or if a container or network this binary started is
// still there: every test removes what it started, failed ones included.
//
// Most of the parallel tests' time is waiting on containers and failovers, so more of them run
// at once than go test's default (GOMAXPROCS).
func TestMain(m *testing.M) {
	testparallel.Default(4)
	code := dockertest.AfterTests(m.Run())
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// start starts spec from the test image and closes it when the test ends, also when it fails.
func start(t *testing.T, spec compose.Spec) *docker.Topology {
	t.Helper()
	image := dockertest.Image(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	topo, err := docker.Start(ctx, spec, docker.Options{Image: image})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { topo.Close() })
	return topo
}

func TestBuildImageIsCached(t *testing.T) {
	image := dockertest.Image(t)
	if os.Getenv(dockertest.ImageEnv) != "" {
		t.Skipf("%s=%s: no local image is built", dockertest.ImageEnv, image)
	}
	ctx := context.Background()
	first, err := docker.BuildImage(ctx, docker.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := docker.BuildImage(ctx, docker.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Built || again.ID != first.ID || again.Content != first.Content || !strings.HasPrefix(first.Content, "sha256:") {
		t.Fatalf("second build %+v after %+v: want no build, the same image and content", again, first)
	}
}

func TestStartOnDocker(t *testing.T) {
	t.Parallel() // every topology is its own; see the subtests
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
			t.Parallel() // a topology of its own; what it checks after Close is labelled with its id
			spec, err := compose.ParseSpec(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			spec.MasterName = tc.masterArg
			topo := start(t, spec)
			ctx := t.Context()
			d := topo.Describe()
			if d.Kind != spec.Kind || len(d.Nodes) != tc.nodes || len(topo.Addrs()) != tc.addrs {
				t.Fatalf("Describe %+v, Addrs %v: want kind %s, %d nodes, %d addrs", d, topo.Addrs(), spec.Kind, tc.nodes, tc.addrs)
			}
			roles := map[string]int{}
			for _, n := range d.Nodes {
				roles[n.Role]++
				host, _, _ := net.SplitHostPort(n.Addr)
				// sentinel's nodes are on private networks; the others are on loopback.
				if spec.Kind != compose.KindSentinel && host != "127.0.0.1" {
					t.Errorf("node %s is not on loopback", n.Addr)
				}
				if reply, err := docker.Command(ctx, n.Addr, "PING"); err != nil || reply != "PONG" {
					t.Errorf("PING %s (%s): %q, %v", n.Addr, n.Role, reply, err)
				}
				// A started topology's replicas hold the master's data already: a run
				// that begins at once, or fails over, must not find them still syncing.
				if n.Role == compose.RoleReplica {
					info, err := docker.Command(ctx, n.Addr, "INFO", "replication")
					if err != nil || !strings.Contains(info, "master_link_status:up") {
						t.Errorf("replica %s right after start: %v\n%s", n.Addr, err, info)
					}
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
				if _, err := docker.Command(ctx, topo.Addrs()[0], "SET", "{k}a", "1"); err != nil && !strings.Contains(err.Error(), "MOVED") {
					t.Errorf("SET on the cluster: %v", err)
				}
			}
			if err := topo.Close(); err != nil {
				t.Fatal(err)
			}
			for _, n := range d.Nodes {
				if _, err := docker.Command(context.Background(), n.Addr, "PING"); err == nil {
					t.Errorf("%s still answers after Close", n.Addr)
				}
			}
			cs, ns, err := docker.Resources(context.Background(), docker.LabelTopology+"="+topo.ID())
			if err != nil || len(cs)+len(ns) > 0 {
				t.Errorf("after Close: containers %v, networks %v, error %v; want none", cs, ns, err)
			}
		})
	}
}

// A start cancelled half-way (Ctrl-C during lockbench up, a test's deadline) must remove the
// containers and networks it already made.
func TestCancelledStartLeavesNothing(t *testing.T) {
	image := dockertest.Image(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mine := docker.LabelPID + "=" + strconv.Itoa(os.Getpid())
	go func() {
		// Cancel as soon as the first container exists.
		for ctx.Err() == nil {
			if cs, _, err := docker.Resources(ctx, mine); err == nil && len(cs) > 0 {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	topo, err := docker.Start(ctx, compose.Spec{Kind: compose.KindSentinel}, docker.Options{Image: image})
	if err == nil {
		topo.Close()
		t.Fatal("Start succeeded despite the cancellation")
	}
	cs, ns, err := docker.Resources(context.Background(), mine)
	if err != nil || len(cs)+len(ns) > 0 {
		t.Fatalf("after a cancelled start: containers %v, networks %v, error %v; want none", cs, ns, err)
	}
}

// Reap removes what a killed lockbench left (its pid no longer runs) and nothing of a live one.
func TestReapRemovesOnlyDeadOwners(t *testing.T) {
	image := dockertest.Image(t)
	live := start(t, compose.Spec{Kind: compose.KindSingle})
	ctx := t.Context()
	// A container labelled as if a dead process had started it.
	dead := exitedPid(t)
	id := runLabelled(t, image, map[string]string{docker.LabelOwner: "1", docker.LabelPID: strconv.Itoa(dead), docker.LabelTopology: "reap-test"})
	t.Cleanup(func() { removeContainer(id) })
	if err := docker.Reap(ctx); err != nil {
		// Reap also tries every other dead owner's leftovers on the engine, which a test of
		// its own does not control (an engine that lost a network's endpoint count refuses
		// forever to remove it); what this test owns is checked below.
		t.Logf("Reap: %v", err)
	}
	if cs, _, _ := docker.Resources(ctx, docker.LabelTopology+"=reap-test"); len(cs) != 0 {
		t.Errorf("Reap left the dead owner's container %v", cs)
	}
	if cs, _, _ := docker.Resources(ctx, docker.LabelTopology+"="+live.ID()); len(cs) != 1 {
		t.Errorf("Reap touched a live topology: its containers are now %v", cs)
	}
}

// exitedPid returns the pid of a process that has exited (and been waited for).
func exitedPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// runLabelled starts a container of image with labels, with the docker CLI, and returns its id.
func runLabelled(t *testing.T, image string, labels map[string]string) string {
	t.Helper()
	args := []string{"run", "-d"}
	for k, v := range labels {
		args = append(args, "--label", k+"="+v)
	}
	args = append(args, image, "sleep", "infinity")
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func removeContainer(id string) { exec.Command("docker", "rm", "-f", id).Run() }

// Concurrent builds of one tag (test binaries of several packages starting at once) build it
// once; the others find it up to date, and no losing image is left dangling.
func TestConcurrentBuildsBuildOnce(t *testing.T) {
	dockertest.Require(t)
	tag := "lockbench/redis:test-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { exec.Command("docker", "rmi", tag).Run() })
	results := make(chan docker.BuildResult, 3)
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			r, err := docker.BuildImage(context.Background(), docker.BuildOptions{Tag: tag})
			results <- r
			errs <- err
		}()
	}
	built, ids := 0, map[string]bool{}
	for range 3 {
		r := <-results
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		if r.Built {
			built++
		}
		ids[r.ID] = true
	}
	if built != 1 || len(ids) != 1 {
		t.Fatalf("%d builds, image ids %v: want one build and one image", built, ids)
	}
}

// A start whose image is neither on the engine nor pullable says how to build one.
func TestMissingImageSaysHowToBuildOne(t *testing.T) {
	dockertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	topo, err := docker.Start(ctx, compose.Spec{Kind: compose.KindSingle}, docker.Options{Image: "lockbench/no-such-image:none"})
	if err == nil {
		topo.Close()
		t.Fatal("Start with a missing image succeeded")
	}
	if !strings.Contains(err.Error(), "lockbench image build") || !strings.Contains(err.Error(), docker.LocalImage) {
		t.Fatalf("error %q does not say how to build the local image", err)
	}
}

// TestFailingHelper is what TestFailedTestLeavesNothing runs in a subprocess: a test that
// starts a topology and fails.
func TestFailingHelper(t *testing.T) {
	if os.Getenv("LOCKBENCH_FAILING_HELPER") != "1" {
		t.Skip("run by TestFailedTestLeavesNothing")
	}
	start(t, compose.Spec{Kind: compose.KindSentinel})
	t.Fatal("failing on purpose, with a sentinel topology running")
}

// A test that fails with a topology running still removes it (t.Cleanup), and its binary's
// TestMain finds nothing left.
func TestFailedTestLeavesNothing(t *testing.T) {
	// What it checks is labelled with its subprocess's pid; tests that look for this process's
	// own leftovers (TestCancelledStartLeavesNothing) are not parallel and so never overlap it.
	t.Parallel()
	dockertest.Image(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestFailingHelper$")
	cmd.Env = append(os.Environ(), "LOCKBENCH_FAILING_HELPER=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "failing on purpose") {
		t.Fatalf("the helper test should have failed on purpose: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "left behind") {
		t.Errorf("the failed test's binary reports leftovers:\n%s", out)
	}
	cs, ns, err := docker.Resources(context.Background(), docker.LabelPID+"="+strconv.Itoa(cmd.Process.Pid))
	if err != nil || len(cs)+len(ns) > 0 {
		t.Fatalf("after a failed test: containers %v, networks %v, error %v; want none", cs, ns, err)
	}
}
