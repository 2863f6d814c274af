package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/internal/testparallel"
)

// binary is the lockbench binary the tests run, built by TestMain.
var binary string

// TestMain builds lockbench from ./cmd/lockbench once, runs the tests, and fails the run if a
// lockbench process they started left a container or network behind: every test removes what
// its runs made, failed tests too (each test also checks its own runs).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lockbench-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "lockbench")
	if err := build(binary); err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "FAIL: building lockbench:", err)
		os.Exit(1)
	}
	// The parallel tests run 3 at a time rather than go test's GOMAXPROCS (2 in CI): they are
	// Docker containers and lockbench subprocesses waiting on image builds, container starts
	// and fixed-length phases more than computing (as cmd/lockbench's, issue 37).
	testparallel.Default(3)
	code := m.Run()
	if err := leftovers(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles ./cmd/lockbench into out, with the race detector when the tests have it.
func build(out string) error {
	goCmd, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		return err
	}
	args := []string{"build", "-o", out}
	if raceBuild {
		args = append(args, "-race")
	}
	cmd := exec.Command(goCmd, append(args, "../cmd/lockbench")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %v: %w\n%s", cmd.Args[1:], err, b)
	}
	return nil
}

var (
	startedMu sync.Mutex
	started   []int // pids of the lockbench processes the tests started
)

// leftovers returns an error naming what a lockbench process of these tests left on the Docker
// engine (docker.LabelPID), and removes it; without an engine, nil.
func leftovers() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if docker.Available(ctx) != nil {
		return nil
	}
	startedMu.Lock()
	defer startedMu.Unlock()
	var errs []error
	for _, pid := range started {
		cs, ns, err := docker.Resources(ctx, docker.LabelPID+"="+strconv.Itoa(pid))
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("listing what lockbench (pid %d) left: %w", pid, err))
		case len(cs)+len(ns) > 0:
			errs = append(errs, fmt.Errorf("lockbench (pid %d) left containers %v, networks %v", pid, cs, ns))
		}
	}
	if len(errs) > 0 {
		docker.Reap(ctx) // the processes have exited, so Reap takes what they left
	}
	return errors.Join(errs...)
}
