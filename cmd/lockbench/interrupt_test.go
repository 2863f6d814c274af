package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
)

// A second Ctrl-C quits at once, while the first is still winding down: exit 130, no result
// file. The wind-down waits on a server that stopped answering, one the test attached
// lockbench to, so the second Ctrl-C has no topology of lockbench's to stop first (with one, its
// stopping the stopped server takes the kill grace, during which the wind-down may finish).
func TestSecondCtrlCQuitsAtOnce(t *testing.T) {
	srv := redistest.NewServer(t)
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--addr", srv.Addr(), "--driver", "lockcore", "--concurrency", "2", "--keys", "10",
		"--duration", "60s", "--warmup", "0s", "--allow-stalls", "--out", dir)
	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(errb.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q from lockbench:\n%s", what, errb)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("[1/1]")
	// A stopped server keeps the first Ctrl-C's wind-down (the post-run reads, with
	// --allow-stalls not skipped, each waiting out its timeout) busy for seconds.
	pid := srv.Pid()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) }) // before redistest stops it
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor("interrupted: stopping, writing what was measured (Ctrl-C again to quit at once)")
	time.Sleep(300 * time.Millisecond)
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) > 0 {
		t.Fatalf("the first Ctrl-C's wind-down is over already (%v): the test shows nothing\n%s", files, errb)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code, _ := finish(t, cmd, errb)
	if code != exitInterrupted {
		t.Fatalf("exit %d after the second Ctrl-C, want %d\n%s", code, exitInterrupted, errb)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) > 0 {
		t.Errorf("result files %v: a second Ctrl-C should quit before writing\n%s", files, errb)
	}
}
