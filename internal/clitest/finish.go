package clitest

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Finish waits for the lockbench process cmd (its stdout a *bytes.Buffer, its stderr errb) and
// returns its exit code and stdout; it kills it and fails t if it has not ended in 90 s.
func Finish(t *testing.T, cmd *exec.Cmd, errb *SyncBuffer) (int, string) {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("lockbench did not finish:\n%s", errb)
	}
	return cmd.ProcessState.ExitCode(), cmd.Stdout.(*bytes.Buffer).String()
}

// InterruptRun sends cmd the Ctrl-C of a user, waits for it to finish and fails t unless it
// exits with code, an interrupted run's; it returns what lockbench wrote to stdout.
func InterruptRun(t *testing.T, cmd *exec.Cmd, errb *SyncBuffer, code int) string {
	t.Helper()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	got, out := Finish(t, cmd, errb)
	if got != code {
		t.Fatalf("exit %d after Ctrl-C, want %d\n%s", got, code, errb)
	}
	return out
}
