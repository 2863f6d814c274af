package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
)

// Issue 36, defect 4: a server SIGSTOPped in the middle of the measured phase gave a row of
// errors 0 and a healthy throughput, exit 0. The stall is marked in the result and fails the run;
// --allow-stalls reports it without failing.
func TestStalledServerFailsTheRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		flags []string
		code  int
		says  string
	}{
		{"default", nil, exitFailure, "FAILED: STALL: "},
		{"allowed", []string{"--allow-stalls"}, exitOK, "stall allowed by --allow-stalls"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.NewServer(t)
			dir := t.TempDir()
			errb := &syncBuffer{}
			// Stopped for 1.5 s: past a 1 s --stall-threshold (the default, 2 s, leaves room for
			// a loaded machine), short of the drivers' 2 s reply timeout, so that no call fails
			// and only the stall can tell.
			cmd := lockbench(t, errb, append([]string{"run", "--addr", srv.Addr(), "--driver", "redislock", "--concurrency", "2",
				"--keys", "2", "--lease", "30s", "--duration", "4s", "--warmup", "0s", "--stall-threshold", "1s", "--out", dir}, c.flags...)...)
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(errb.String(), "measuring 4s") {
				if time.Now().After(deadline) {
					t.Fatalf("the run did not start:\n%s", errb)
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond)
			if err := srv.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Signal(syscall.SIGCONT) })
			time.Sleep(1500 * time.Millisecond)
			if err := srv.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			code, out := finish(t, cmd, errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errb)
			}
			if !strings.Contains(errb.String(), c.says) {
				t.Errorf("stderr lacks %q:\n%s", c.says, errb)
			}
			f := readResult(t, dir)
			if len(f.Runs) != 1 || f.Runs[0].ServerStall == nil || f.Runs[0].ServerStall.LongestS < 1 {
				t.Fatalf("the result does not mark the stall: %+v", f.Runs)
			}
		})
	}
}
