package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/compose/docker/dockertest"
	"github.com/lockbench/lockbench/generators/generatorstest"
	"github.com/lockbench/lockbench/results"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// imageID returns the id of image on the engine.
func imageID(t *testing.T, image string) string {
	t.Helper()
	cli, err := testcontainers.NewDockerClientWithOpts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	img, err := cli.ImageInspect(context.Background(), image)
	if err != nil {
		t.Fatal(err)
	}
	return img.ID
}

// The acceptance run of --generators docker: the docker provider's single server, three
// generator containers, two drivers. Each driver's merged acquisitions are the sum of three
// processes, each of which ran in its own container (its own host name) of the lockbench
// image, and nothing is left on the engine.
func TestGeneratorsDocker(t *testing.T) {
	t.Parallel()
	redisImage := dockertest.Image(t)
	lbImage := generatorstest.Image(t)
	wantImage := imageID(t, lbImage)
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--provider", "docker", "--image", redisImage,
		"--procs", "3", "--generators", "docker", "--generator-image", lbImage, "--generator-cpus", "0",
		"--keys", "1", "--driver", "lockcore,naive", "--concurrency", "4",
		"--duration", "1s", "--warmup", "200ms", "--out", dir)
	code, out := finish(t, cmd, errb)
	t.Cleanup(func() { removeLeft(cmd.Process.Pid) })
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(f.Runs))
	}
	for _, r := range f.Runs {
		if r.Fleet == nil || len(r.Fleet.Processes) != 3 || r.Fleet.CrossProcessChecker {
			t.Fatalf("%s: fleet %+v; want 3 processes, each checking its own holders", r.Driver, r.Fleet)
		}
		var sum int64
		hosts := map[string]bool{}
		for _, p := range r.Fleet.Processes {
			sum += p.Acquisitions
			hosts[p.Host] = true
			if p.Image != wantImage || p.Version == "" {
				t.Errorf("%s process %d: image %q version %q; want %s and the worker's version", r.Driver, p.Index, p.Image, p.Version, wantImage)
			}
		}
		if r.Acquisitions == 0 || r.Acquisitions != sum || r.Violations != 0 || r.Errors != 0 || !r.Complete {
			t.Errorf("%s: %d acquisitions (processes %d), %d violations, %d errors, complete %v", r.Driver, r.Acquisitions, sum, r.Violations, r.Errors, r.Complete)
		}
		if len(hosts) != 3 {
			t.Errorf("%s: host names %v; want one per container", r.Driver, hosts)
		}
		if !slices.Contains(r.Checkers, results.CheckerReferee) || r.Referee == nil || r.Referee.Entries == 0 {
			t.Errorf("%s: checkers %v, referee %+v; want the referee on by default, marking sections", r.Driver, r.Checkers, r.Referee)
		}
		for _, p := range r.Fleet.Processes {
			if p.Clock == nil || p.Clock.Source == results.ClockLocal {
				t.Errorf("%s process %d: clock %+v; want the common start by the deployment's clock", r.Driver, p.Index, p.Clock)
			}
		}
	}
	if !strings.Contains(errb.String(), "[lockbench-gen-") {
		t.Errorf("the generators' output does not reach stderr named:\n%s", errb)
	}
	assertNothingLeft(t, cmd.Process.Pid)
}

// The negative control across containers: the unsafe driver on three generators, which share
// no memory, is caught by the referee (on by default), and the run exits 1.
func TestGeneratorsDockerRefereeCatchesUnsafe(t *testing.T) {
	t.Parallel()
	lbImage := generatorstest.Image(t)
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--procs", "3", "--generators", "docker", "--generator-image", lbImage,
		"--keys", "1", "--driver", "unsafe", "--concurrency", "2", "--hold", "20ms", // holds past its 10 ms lease
		"--duration", "1s", "--warmup", "200ms", "--out", dir)
	code, out := finish(t, cmd, errb)
	t.Cleanup(func() { removeLeft(cmd.Process.Pid) })
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 1 || f.Runs[0].Referee == nil || f.Runs[0].Referee.Violations == 0 || f.Runs[0].Violations < f.Runs[0].Referee.Violations {
		t.Fatalf("runs %d, referee %+v: want the referee's violations in the run", len(f.Runs), f.Runs[0].Referee)
	}
	assertNothingLeft(t, cmd.Process.Pid)
}

// A generator that cannot reach Redis: the parent reaches the server through a unix socket,
// which is not in the containers' file systems. Each generator's own error reaches the
// parent's stderr prefixed with its container's name, the run fails (exit 1) naming the
// generators, and their containers are removed.
func TestGeneratorsDockerUnreachable(t *testing.T) {
	t.Parallel()
	lbImage := generatorstest.Image(t)
	sock := startSocketRedis(t)
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--addr", "unix://"+sock, "--procs", "2", "--generators", "docker",
		"--generator-image", lbImage, "--driver", "lockcore", "--duration", "1s", "--warmup", "0s", "--no-results")
	code, out := finish(t, cmd, errb)
	t.Cleanup(func() { removeLeft(cmd.Process.Pid) })
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errb)
	}
	for i := range 2 {
		named := regexp.MustCompile(fmt.Sprintf(`generator %d \(lockbench-gen-[0-9A-Za-z-]+-%d\) exited [12]`, i, i))
		prefixed := regexp.MustCompile(fmt.Sprintf(`\[lockbench-gen-[0-9A-Za-z-]+-%d\] lockbench worker: .*%s`, i, regexp.QuoteMeta(sock)))
		if !named.MatchString(errb.String()) || !prefixed.MatchString(errb.String()) {
			t.Errorf("generator %d: its error or its name is missing from stderr:\n%s", i, errb)
		}
	}
	assertNothingLeft(t, cmd.Process.Pid)
}

// An exec adapter with --generators docker on a deployment lockbench attached to (a unix
// socket: not loopback, so the docker checks pass): the preflight reads the adapter's hello on
// this machine before any container runs, and an adapter that is not here fails the run (exit 1)
// naming it and saying why it was started here, with nothing started on the engine.
func TestGeneratorsDockerAdapterHelloHere(t *testing.T) {
	t.Parallel()
	lbImage := generatorstest.Image(t)
	sock := startSocketRedis(t)
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--addr", "unix://"+sock, "--procs", "2", "--generators", "docker",
		"--generator-image", lbImage, "--driver", "exec:gone=/nonexistent/adapter", "--duration", "1s",
		"--warmup", "0s", "--no-results")
	code, out := finish(t, cmd, errb)
	t.Cleanup(func() { removeLeft(cmd.Process.Pid) })
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errb)
	}
	for _, want := range []string{"adapter gone", "with --generators docker too", "must run here"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb)
		}
	}
	if strings.Contains(errb.String(), "lockbench-gen-") {
		t.Errorf("a generator container was started:\n%s", errb)
	}
	assertNothingLeft(t, cmd.Process.Pid)
}

// startSocketRedis starts a redis-server listening only on a unix socket in a temp dir, stopped
// when the test ends, and returns the socket's path.
func startSocketRedis(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	srv := exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			return sock
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not create its socket")
		}
	}
}

// Ctrl-C while the generator containers measure: lockbench forwards it, exits 130 and removes
// every container and network.
func TestGeneratorsDockerCtrlC(t *testing.T) {
	t.Parallel()
	lbImage := generatorstest.Image(t)
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--procs", "2", "--generators", "docker", "--generator-image", lbImage,
		"--driver", "lockcore", "--concurrency", "2", "--duration", "60s", "--warmup", "0s", "--no-results")
	pid := cmd.Process.Pid
	t.Cleanup(func() { removeLeft(pid) })
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(errb.String(), "process 1 of 2"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("the generators did not start:\n%s", errb)
		}
	}
	cs, _, err := docker.Resources(context.Background(), docker.LabelPID+"="+strconv.Itoa(pid))
	if err != nil || len(cs) != 2 {
		t.Fatalf("containers of lockbench %d: %v (%v); want the 2 generators", pid, cs, err)
	}
	interruptRun(t, cmd, errb)
	assertNothingLeft(t, pid)
}

// lockbench image build lockbench finds the image the tests built up to date, and refuses a
// directory that is not a checkout.
func TestImageBuildLockbenchCommand(t *testing.T) {
	t.Parallel()
	image := generatorstest.Image(t)
	code, out, errs := lockbenchOut(t, "image", "build", "lockbench")
	if code != exitOK || out != image+"\n" || !strings.Contains(errs, "up to date") {
		t.Fatalf("image build lockbench: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = lockbenchOut(t, "image", "build", "lockbench", "--src", t.TempDir())
	if code != exitFailure || !strings.Contains(errs, "not a lockbench checkout") {
		t.Errorf("--src of an empty directory: exit %d, stderr %q", code, errs)
	}
	code, _, errs = lockbenchOut(t, "image", "build", "postgres")
	if code != exitUsage || !strings.Contains(errs, `unknown image "postgres"`) {
		t.Errorf("image build postgres: exit %d, stderr %q", code, errs)
	}
}

// containerPaused reports whether the container called name is paused.
func containerPaused(t *testing.T, name string) bool {
	t.Helper()
	cli, err := testcontainers.NewDockerClientWithOpts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	res, err := cli.ContainerInspect(context.Background(), name, client.ContainerInspectOptions{})
	if err != nil {
		return false // not created yet, or gone
	}
	return res.Container.State != nil && res.Container.State.Paused
}

// pause-client on a generator container is docker pause; Ctrl-C during it unpauses the
// container, which then handles the interrupt and hands back what it measured, and every
// container and network is removed.
func TestGeneratorsDockerPauseClientCtrlC(t *testing.T) {
	t.Parallel()
	lbImage := generatorstest.Image(t)
	dir := t.TempDir()
	errb := &syncBuffer{}
	// At 2 s, not 200 ms: a loaded machine started a generator container 0.6 s late (CI,
	// 2026-11-27), another 6.6 s late (2026-11-28); a pause now waits for its generator to start,
	// and the test waits for the container to show paused.
	const spec = "pause-client:gen2@2s+20s"
	cmd := lockbench(t, errb, "run", "--procs", "2", "--generators", "docker", "--generator-image", lbImage,
		"--driver", "lockcore", "--keys", "4", "--concurrency", "2", "--duration", "30s", "--warmup", "0s",
		"--fault", spec, "--out", dir)
	pid := cmd.Process.Pid
	t.Cleanup(func() { removeLeft(pid) })
	named := regexp.MustCompile(`(?m)^generator 1: container (\S+)$`)
	var name string
	for deadline := time.Now().Add(2 * time.Minute); name == "" || !containerPaused(t, name); time.Sleep(50 * time.Millisecond) {
		if m := named.FindStringSubmatch(errb.String()); m != nil {
			name = m[1]
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("generator 2 (container %q) was not paused:\n%s", name, errb)
		}
	}
	interruptRun(t, cmd, errb)
	assertNothingLeft(t, pid)
	r := &readResult(t, dir).Runs[0]
	if r.Fleet == nil || len(r.Fleet.Processes) != 2 || len(r.Fleet.Lost) != 0 {
		t.Errorf("fleet %+v: want both generators' results, the paused one's too", r.Fleet)
	}
	flt := clientFault(t, r, spec)
	if !flt.Fired || flt.Error != "" || flt.Addr != name || flt.LastedS >= 20 {
		t.Errorf("fault %+v; want %s paused, cut short by the interrupt", flt, name)
	}
}

// clientFault returns the run's fault of spec.
func clientFault(t *testing.T, r *results.Run, spec string) results.Fault {
	t.Helper()
	i := slices.IndexFunc(r.Faults, func(f results.Fault) bool { return f.Spec == spec })
	if i < 0 {
		t.Fatalf("%s: faults %+v; want %s", r.Driver, r.Faults, spec)
	}
	return r.Faults[i]
}
