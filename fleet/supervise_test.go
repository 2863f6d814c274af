package fleet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// modeEnv makes the test binary act as a child: "wait" waits for SIGINT (at most 30 s) and
// exits 0, "crash" kills itself with SIGKILL, "parent" starts two "wait" children, prints their
// pids and waits forever (the test kills it).
const modeEnv = "FLEET_TEST_MODE"

func TestMain(m *testing.M) {
	switch os.Getenv(modeEnv) {
	case "wait":
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		fmt.Fprintln(os.Stderr, "waiting")
		select {
		case <-sig:
			fmt.Fprintln(os.Stderr, "interrupted")
			os.Exit(0)
		case <-time.After(30 * time.Second):
			os.Exit(4)
		}
	case "crash":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(10 * time.Second)
	case "worker":
		fakeWorker(os.Args[len(os.Args)-4:])
		os.Exit(0)
	case "parent", "stopping-parent":
		// A stopping parent stops each child (as pause-client does) before reporting it.
		stop := os.Getenv(modeEnv) == "stopping-parent"
		c := &Children{}
		Run(context.Background(), Procs{Path: os.Args[0], N: 2, Env: []string{modeEnv + "=wait"}, Children: c,
			Args: func(int) []string { return []string{"-test.run=^$"} },
			Started: func(i, pid int) {
				if stop {
					if err := c.Stop(i); err != nil {
						fmt.Printf("stop: %v\n", err)
					}
				}
				fmt.Printf("pid %d\n", pid)
			}})
		os.Exit(5)
	}
	os.Exit(m.Run())
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// lockedBuffer is a bytes.Buffer that Run's output goroutines write while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestInterruptReachesEveryChildOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stderr lockedBuffer
	started := make(chan int, 3)
	go func() {
		// Interrupt once every child has installed its handler (it says "waiting" after): a
		// fixed pause was too short for a race-built test binary to start on a loaded machine.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && strings.Count(stderr.String(), "] waiting\n") < 3 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	exits := Run(ctx, Procs{Path: os.Args[0], N: 3, Env: []string{modeEnv + "=wait"}, Stderr: &stderr,
		Args: func(int) []string { return []string{"-test.run=^$"} }, Started: func(_, pid int) { started <- pid }})
	for _, e := range exits {
		if e.Err != nil || e.Code != 0 || e.Crashed() {
			t.Errorf("%v: want exit 0 after one SIGINT", e)
		}
		if alive(e.Pid) {
			t.Errorf("process %d (pid %d) still alive", e.Index, e.Pid)
		}
	}
	for i := range 3 {
		if !strings.Contains(stderr.String(), fmt.Sprintf("[proc %d] interrupted\n", i)) {
			t.Errorf("stderr lacks process %d's prefixed line:\n%s", i, stderr.String())
		}
	}
}

func TestCrashedChildIsReported(t *testing.T) {
	exits := Run(context.Background(), Procs{Path: os.Args[0], N: 1, Env: []string{modeEnv + "=crash"},
		Args: func(int) []string { return []string{"-test.run=^$"} }})
	e := exits[0]
	if !e.Crashed() || e.Signal != syscall.SIGKILL || !strings.Contains(e.String(), "killed") {
		t.Errorf("%v (signal %v): want a crash by SIGKILL", e, e.Signal)
	}
	missing := Run(context.Background(), Procs{Path: "/nonexistent/lockbench", N: 1, Args: func(int) []string { return nil }})
	if !missing[0].Crashed() || missing[0].Err == nil || missing[0].Pid != 0 {
		t.Errorf("%v: want a process that did not start", missing[0])
	}
}

// TestChildrenDieWithTheParent kills a real parent with SIGKILL, which it cannot catch, and
// checks that its children do not outlive it (Pdeathsig), also when the parent had stopped them
// (a client pause): SIGKILL ends a stopped process too, so none is left stopped.
func TestChildrenDieWithTheParent(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("Pdeathsig is Linux only")
	}
	for _, mode := range []string{"parent", "stopping-parent"} {
		t.Run(mode, func(t *testing.T) { childrenDieWith(t, mode) })
	}
}

func childrenDieWith(t *testing.T, mode string) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), modeEnv+"="+mode)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	var pids []int
	sc := bufio.NewScanner(out)
	for len(pids) < 2 && sc.Scan() {
		if pid, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "pid ")); err == nil {
			pids = append(pids, pid)
		} else {
			t.Errorf("parent: %s", sc.Text())
		}
	}
	if len(pids) != 2 {
		t.Fatalf("parent reported pids %v", pids)
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("child %d not running before the parent is killed", pid)
		}
		if mode == "stopping-parent" {
			waitState(t, pid, 'T')
		}
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		// The children are reparented and reaped by init; until then a zombie answers kill 0.
		for alive(pid) && !zombie(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) && !zombie(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("child %d outlived its parent", pid)
		}
	}
}

func zombie(pid int) bool {
	st, ok := procState(pid)
	return !ok || st == 'Z'
}

// procState returns the state letter of pid in /proc (R, S, T stopped, Z zombie…), and false
// when the process is gone.
func procState(pid int) (byte, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0, false
	}
	return s[i+2], true
}

// waitState waits, at most 10 s, until pid is in state st.
func waitState(t *testing.T, pid int, st byte) {
	t.Helper()
	var got byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got, _ = procState(pid); got == st {
			return
		}
	}
	t.Fatalf("process %d in state %q, want %q", pid, got, st)
}
