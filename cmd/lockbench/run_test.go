package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// lockbench starts the test binary as lockbench with args; stderr is captured into errb.
func lockbench(t *testing.T, errb *syncBuffer, args ...string) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not on PATH (CI must install it: scripts/install-deps.sh)")
		}
		t.Skip("redis-server not on PATH; install it with scripts/install-deps.sh")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOCKBENCH_TEST_MAIN=1")
	cmd.Stdout = new(bytes.Buffer)
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

var pidLine = regexp.MustCompile(`redis-server pid (\d+)`)

// assertServerGone checks the redis-server lockbench reported on stderr is no longer running.
func assertServerGone(t *testing.T, stderr string) {
	t.Helper()
	m := pidLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no redis-server pid in stderr:\n%s", stderr)
	}
	pid, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Fatalf("redis-server pid %d still exists after lockbench exited (kill 0: %v)", pid, err)
	}
}

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

func TestRunEndToEndOnEmbeddedRedis(t *testing.T) {
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore,naive", "--concurrency", "8", "--keys", "100",
		"--duration", "1s", "--warmup", "200ms", "--out", dir)
	err := cmd.Wait()
	if err != nil {
		t.Fatalf("lockbench run: %v\nstderr:\n%s", err, errb)
	}
	out := cmd.Stdout.(*bytes.Buffer).String()
	for _, want := range []string{"lockcore", "naive", "acq/s", "violations"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	f := readResult(t, dir)
	if !f.Complete || len(f.Runs) != 2 {
		t.Fatalf("result: complete=%v runs=%d", f.Complete, len(f.Runs))
	}
	for _, r := range f.Runs {
		if r.ThroughputPerS <= 0 || r.Violations != 0 || !r.Complete || r.RedisCommandsPerAcquisition <= 0 {
			t.Errorf("%s: throughput %v, violations %d, complete %v, cmds/acq %v", r.Driver, r.ThroughputPerS, r.Violations, r.Complete, r.RedisCommandsPerAcquisition)
		}
	}
	assertServerGone(t, errb.String())
}

func TestCtrlCWritesIncompleteResults(t *testing.T) {
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "lockcore,naive", "--concurrency", "8", "--keys", "100",
		"--duration", "60s", "--warmup", "100ms", "--out", dir)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errb.String(), "[1/2]") {
		if time.Now().After(deadline) {
			t.Fatalf("run did not start:\n%s", errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // past the warm-up, into the measured phase
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("lockbench did not exit after Ctrl-C:\n%s", errb)
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit code %d after Ctrl-C, want %d\n%s", code, exitInterrupted, errb)
	}
	f := readResult(t, dir)
	if f.Complete || len(f.Runs) != 1 {
		t.Fatalf("result after Ctrl-C: complete=%v runs=%d (want incomplete, the first driver only)", f.Complete, len(f.Runs))
	}
	r := f.Runs[0]
	if r.Complete || r.Incomplete == "" || r.Acquisitions == 0 {
		t.Fatalf("interrupted run: complete=%v reason=%q acquisitions=%d", r.Complete, r.Incomplete, r.Acquisitions)
	}
	assertServerGone(t, errb.String())
}
