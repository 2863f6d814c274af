package kept

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
)

// writeState writes a state file as if an up with pid had written it, and returns its path.
func writeState(t *testing.T, dir, name string, pid int) string {
	t.Helper()
	st := State{Name: name, Pid: pid, Provider: "native", Topology: "single", Started: time.Now(), Ready: time.Now(),
		Addrs: []string{"127.0.0.1:1"}, Description: &compose.Description{Kind: compose.KindSingle, Nodes: []compose.Node{{Addr: "127.0.0.1:1", Role: compose.RoleMaster}}}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Path(dir, name), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return Path(dir, name)
}

// fakeUp starts a process UpAlive takes for lockbench up: a shell named lockbench with "up"
// among its arguments, running script, until the test ends. $0 in script is arg. fakeUp
// returns once script has created "$0.ready", which it does once its traps are set: a signal
// sent earlier would find the shell's default action.
func fakeUp(t *testing.T, script, arg string) *exec.Cmd {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	fake := filepath.Join(t.TempDir(), "lockbench")
	if err := os.Symlink(sh, fake); err != nil {
		t.Fatal(err)
	}
	up := exec.Command(fake, "-c", script, arg, "up")
	up.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its sleeps go with it
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { up.Wait(); close(done) }()
	t.Cleanup(func() { syscall.Kill(-up.Process.Pid, syscall.SIGKILL); <-done })
	ready := func() bool { _, err := os.Stat(arg + ".ready"); return err == nil }
	for deadline := time.Now().Add(5 * time.Second); !ready() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if !ready() || !UpAlive(up.Process.Pid) {
		t.Fatalf("the fake up did not get ready (%s.ready), or UpAlive of %q is false", arg, cmdline(up.Process.Pid))
	}
	return up
}

// A state file whose up is gone, one whose pid was recycled by a process that is not lockbench
// up, one up did not write and one already gone: Stop removes the first three and signals no
// process.
func TestStopStale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dead := writeState(t, dir, "dead", exitedPid(t))
	other := sleeper(t)
	recycled := writeState(t, dir, "recycled", other)
	garbage := Path(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path    string
		outcome Outcome
		want    string
	}{
		{dead, Stale, `removed stale state of "dead": its up process (pid `},
		{recycled, Stale, fmt.Sprintf(`removed stale state of "recycled": its up process (pid %d) is gone`, other)},
		{garbage, Unreadable, "removed unreadable state file " + garbage + " ("},
		{Path(dir, "none"), Gone, `nothing running as "none" (it stopped meanwhile)`},
	} {
		s, err := Stop(tc.path, 5*time.Second)
		if err != nil || s.Outcome != tc.outcome || !strings.HasPrefix(s.String(), tc.want) {
			t.Errorf("Stop(%s) = %v (outcome %d), %v; want outcome %d, %q", tc.path, s, s.Outcome, err, tc.outcome, tc.want)
		}
		if strings.Contains(s.String(), "leftover") {
			t.Errorf("Stop(%s) stopped leftover nodes of a state without node pids: %s", tc.path, s)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("files left in the state dir: %v", files)
	}
	if err := syscall.Kill(other, 0); err != nil {
		t.Fatalf("Stop signalled a process that is not lockbench up: %v", err)
	}
}

// A live up is sent SIGTERM and waited for: Stop returns once it exited and removed its file;
// one that ignores SIGTERM is a timeout, ErrNotStopped, and is left running.
func TestStopLiveUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := Path(dir, "live")
	// What up does on SIGTERM: stop (here: nothing to stop), remove its state file, exit.
	up := fakeUp(t, `trap 'rm -f "$0"; exit 0' TERM; : > "$0.ready"; while :; do sleep 0.05; done`, path)
	writeState(t, dir, "live", up.Process.Pid)
	s, err := Stop(path, 10*time.Second)
	if want := fmt.Sprintf(`stopped "live": single (native), 1 node, up pid %d`, up.Process.Pid); err != nil || s.Outcome != Stopped || s.String() != want {
		t.Fatalf("Stop = %q, %v; want %q", s, err, want)
	}
	if UpAlive(up.Process.Pid) {
		t.Error("the up still runs after Stop")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file after Stop: %v", err)
	}

	stubborn := fakeUp(t, `trap '' TERM; : > "$0.ready"; while :; do sleep 0.05; done`, filepath.Join(t.TempDir(), "stubborn"))
	path = writeState(t, dir, "stubborn", stubborn.Process.Pid)
	_, err = Stop(path, 300*time.Millisecond)
	if want := fmt.Sprintf(`"stubborn": up process %d did not stop within 300ms`, stubborn.Process.Pid); !errors.Is(err, ErrNotStopped) || err == nil || err.Error() != want {
		t.Errorf("Stop of an up ignoring SIGTERM: %v; want ErrNotStopped, %q", err, want)
	}
	if !UpAlive(stubborn.Process.Pid) {
		t.Error("the stubborn up is gone")
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the state file of an up still running was removed: %v", err)
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	nodes := func(n int) *compose.Description {
		return &compose.Description{Nodes: make([]compose.Node, n)}
	}
	for _, tc := range []struct {
		st   State
		want string
	}{
		{State{Topology: "cluster", Provider: "native", Pid: 4242, Description: nodes(6)}, "cluster (native), 6 nodes, up pid 4242"},
		{State{Topology: "single", Provider: "docker", Pid: 7, Description: nodes(1)}, "single (docker), 1 node, up pid 7"},
		{State{Topology: "masters:3", Provider: "native", Pid: 9}, "masters:3 (native), still starting, up pid 9"},
	} {
		if got := tc.st.Summary(); got != tc.want {
			t.Errorf("Summary = %q, want %q", got, tc.want)
		}
	}
}
