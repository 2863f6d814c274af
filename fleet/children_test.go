package fleet

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// A child stopped through Children (a client pause) and never continued by whoever stopped it
// is continued by Run's interrupt: it handles the SIGINT and exits 0, writing what it has,
// rather than staying stopped until SIGKILL after the grace. Once it has ended, Stop says so and
// Continue has nothing to do.
func TestStoppedChildIsContinuedOnInterrupt(t *testing.T) {
	c := &Children{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan int, 1)
	done := make(chan []Exit)
	go func() {
		done <- Run(ctx, Procs{Path: os.Args[0], N: 1, Env: []string{modeEnv + "=wait"}, Children: c,
			StopGrace: 20 * time.Second, // far past the test's wait: a kill would show as SIGKILL
			Args:      func(int) []string { return []string{"-test.run=^$"} }, Started: func(_, pid int) { started <- pid }})
	}()
	pid := <-started
	time.Sleep(500 * time.Millisecond) // let the child install its handler
	if got, err := c.Pid(0); got != pid || err != nil {
		t.Fatalf("Pid(0) = %d, %v; want %d", got, err, pid)
	}
	if err := c.Stop(0); err != nil {
		t.Fatal(err)
	}
	waitState(t, pid, 'T')
	if err := c.Continue(0); err != nil {
		t.Fatal(err)
	}
	waitState(t, pid, 'S')
	if err := c.Stop(0); err != nil { // stopped again, and left so
		t.Fatal(err)
	}
	waitState(t, pid, 'T')
	cancel()
	var exits []Exit
	select {
	case exits = <-done:
	case <-time.After(15 * time.Second):
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the stopped child did not end on the interrupt")
	}
	if e := exits[0]; e.Err != nil || e.Code != 0 {
		t.Errorf("%v: want exit 0 after the interrupt, continued", e)
	}
	if err := c.Stop(0); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Stop of an ended child: %v; want ErrNotRunning", err)
	}
	if err := c.Continue(0); err != nil {
		t.Errorf("Continue of an ended child: %v; want nil", err)
	}
}

// Children tells a child not started yet (ErrNotStarted: a client fault waits for it) from one
// that has ended or failed to start (ErrNotRunning only: the fault fails).
func TestChildrenNotStartedOrEnded(t *testing.T) {
	c := &Children{}
	if _, err := c.Pid(0); !errors.Is(err, ErrNotStarted) || !errors.Is(err, ErrNotRunning) {
		t.Errorf("before the start: %v; want ErrNotStarted, which is ErrNotRunning", err)
	}
	c.add(0, &os.Process{Pid: 4242})
	if pid, err := c.Pid(0); err != nil || pid != 4242 {
		t.Errorf("running: %d, %v; want 4242", pid, err)
	}
	c.remove(0)
	c.remove(1) // failed to start
	for i := range 2 {
		if _, err := c.Pid(i); !errors.Is(err, ErrNotRunning) || errors.Is(err, ErrNotStarted) {
			t.Errorf("process %d ended: %v; want ErrNotRunning, not ErrNotStarted", i, err)
		}
	}
}
