package e2e

import (
	"bytes"
	"github.com/lockbench/lockbench/internal/clitest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// lockbench's exit codes, as docs/run.md documents them for CI users: the tests hold the binary
// to the documented contract, not to package main's constants.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// The topology providers a result file records.
const (
	providerDocker   = "docker"
	providerAttached = "attached"
)

// syncBuffer is a bytes.Buffer a subprocess writes to while the test reads it.
type syncBuffer = clitest.SyncBuffer

// lockbench starts lockbench with args; stderr is captured into errb, stdout into a
// *bytes.Buffer (cmd.Stdout). It is killed when the test ends, if it is still running.
func lockbench(t *testing.T, errb *syncBuffer, args ...string) *exec.Cmd {
	t.Helper()
	return lockbenchEnv(t, errb, nil, args...)
}

// lockbenchEnv is lockbench with extra environment env.
func lockbenchEnv(t *testing.T, errb *syncBuffer, env []string, args ...string) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not on PATH (CI must install it: scripts/install-deps.sh)")
		}
		t.Skip("redis-server not on PATH; install it with scripts/install-deps.sh")
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = new(bytes.Buffer)
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	startedMu.Lock()
	started = append(started, cmd.Process.Pid)
	startedMu.Unlock()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// lockbenchOut runs lockbench with args to its end (bounded) and returns its exit code, stdout
// and stderr.
func lockbenchOut(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	errb := &syncBuffer{}
	code, stdout = finish(t, lockbench(t, errb, args...), errb)
	return code, stdout, errb.String()
}

// finish waits for lockbench and returns its exit code and stdout.
func finish(t *testing.T, cmd *exec.Cmd, errb *syncBuffer) (int, string) {
	t.Helper()
	return clitest.Finish(t, cmd, errb)
}

// interruptRun sends lockbench the Ctrl-C of a user, waits for it to finish and fails the test
// unless it exits as an interrupted run does; it returns what lockbench wrote to stdout.
func interruptRun(t *testing.T, cmd *exec.Cmd, errb *syncBuffer) string {
	t.Helper()
	return clitest.InterruptRun(t, cmd, errb, exitInterrupted)
}

// readResult reads the one result file in dir, and checks its benchstat file is beside it.
func readResult(t *testing.T, dir string) *results.File {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(paths) != 1 {
		t.Fatalf("want one result file in %s, found %v", dir, paths)
	}
	f, err := results.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(strings.TrimSuffix(paths[0], ".json") + ".bench.txt"); err != nil {
		t.Fatalf("benchstat file missing: %v", err)
	}
	return f
}

// everyDriverClean fails t unless every driver of the comma-separated list all ran in f, with
// acquisitions, no violation, no error, to the end.
func everyDriverClean(t *testing.T, f *results.File, all string) {
	t.Helper()
	ran := map[string]bool{}
	for _, r := range f.Runs {
		ran[r.Driver] = true
		if r.Acquisitions == 0 || r.Violations != 0 || r.Errors != 0 || !r.Complete {
			t.Errorf("%s: %d acquisitions, violations %d, errors %d %v, complete %v", r.Driver, r.Acquisitions, r.Violations, r.Errors, r.ErrorsByKind, r.Complete)
		}
	}
	for _, d := range strings.Split(all, ",") {
		if !ran[d] {
			t.Errorf("driver %s did not run (skipped: %+v)", d, f.Skipped)
		}
	}
}
