// Package dockertest holds what tests that need a Docker engine share: the check that an
// engine answers (a skip on a developer's machine without one, a failure under CI), the local
// Redis image, built once per test binary, and the check that a test binary left no container
// or network behind.
package dockertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/docker"
)

// ImageEnv names the variable that picks the image Docker tests run (redis:7, say, where a
// registry is reachable); unset, they build and run docker.LocalImage.
const ImageEnv = "LOCKBENCH_DOCKER_IMAGE"

// InCI reports whether the tests run under CI (CI set to anything but "", "0" or "false"), where
// a missing engine is a failure rather than a reason to skip.
func InCI() bool {
	switch strings.ToLower(os.Getenv("CI")) {
	case "", "0", "false":
		return false
	}
	return true
}

// RequireWait bounds Require's wait for the engine under CI. CI's machines have an engine, and
// while other test binaries start containers and swarms beside this one it can take seconds to
// answer (more than the 3 s Available once allowed, at 24a9510): there a slow answer is no
// reason to fail. Elsewhere Require waits docker.AvailableTimeout, since a machine without an
// engine only skips.
const RequireWait = 2 * time.Minute

// answered is set once the engine has answered this test binary: it is the same engine for
// every later test, which then need not ask again.
var answered atomic.Bool

// Require returns if a Docker engine answers. Otherwise it fails t under CI, whose machines
// have one, and skips t elsewhere with the reason, since Docker is optional for lockbench.
func Require(t testing.TB) {
	t.Helper()
	if answered.Load() {
		return
	}
	wait := docker.AvailableTimeout
	if InCI() {
		wait = RequireWait
	}
	if err := docker.AvailableWithin(context.Background(), wait); err != nil {
		if InCI() {
			t.Fatalf("CI is set but no Docker engine answers (the Docker tests must run in CI): %v", err)
		}
		t.Skipf("skipping: this test needs a Docker engine: %v", err)
	}
	answered.Store(true)
}

var (
	imageOnce sync.Once
	imageName string
	imageErr  error
)

// Image calls Require, then returns the image Docker tests run: $LOCKBENCH_DOCKER_IMAGE if set,
// else docker.LocalImage, built (or found up to date) once per test binary.
func Image(t testing.TB) string {
	t.Helper()
	Require(t)
	imageOnce.Do(func() {
		if name := os.Getenv(ImageEnv); name != "" {
			imageName = name
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		var res docker.BuildResult
		res, imageErr = docker.BuildImage(ctx, docker.BuildOptions{})
		imageName = res.Tag
	})
	if imageErr != nil {
		t.Fatalf("building the local Redis image: %v", imageErr)
	}
	return imageName
}

// Leftovers returns an error naming the containers and networks that this process started
// (docker.LabelPID) and that still exist. TestMain calls it after the tests: every test must
// remove what it started, failed tests included. Without an engine it returns nil.
func Leftovers() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if docker.Available(ctx) != nil {
		return nil
	}
	cs, ns, err := docker.Resources(ctx, docker.LabelPID+"="+strconv.Itoa(os.Getpid()))
	if err != nil {
		return fmt.Errorf("listing leftovers: %w", err)
	}
	if len(cs)+len(ns) > 0 {
		return fmt.Errorf("left behind: containers %v, networks %v", cs, ns)
	}
	return nil
}

// AfterTests is for TestMain: given m.Run's exit code, it returns 1, after saying why on
// stderr, when the tests left a container or network of this process behind (failed tests
// too must remove what they started), and code otherwise.
func AfterTests(code int) int {
	if err := Leftovers(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: dockertest:", err)
		return 1
	}
	return code
}

// Compose returns the command that runs Docker Compose here: "docker compose" (v2, the plugin)
// if it answers, else "docker-compose" (v1, which has no 'up --wait'). With neither, it fails t
// under CI and skips it elsewhere.
func Compose(t testing.TB) []string {
	t.Helper()
	Require(t)
	for _, cmd := range [][]string{{"docker", "compose"}, {"docker-compose"}} {
		if err := exec.Command(cmd[0], append(cmd[1:], "version")...).Run(); err == nil {
			return cmd
		}
	}
	if InCI() {
		t.Fatal("CI is set but neither 'docker compose' nor 'docker-compose' runs")
	}
	t.Skip("skipping: neither 'docker compose' nor 'docker-compose' runs")
	return nil
}
