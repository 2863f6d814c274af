package kept

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
)

func TestValidName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"default": true, "a": true, "sent-1.b_2": true, "9": true,
		"": false, ".hidden": false, "-x": false, "a/b": false, "../x": false, "a b": false,
		strings.Repeat("x", 64): true, strings.Repeat("x", 65): false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v; want %v", name, got, want)
		}
	}
}

// exitedPid returns the pid of a process that has ended: no up owns it.
func exitedPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// sleeper starts a process that is not lockbench up, for as long as the test runs.
func sleeper(t *testing.T) int {
	t.Helper()
	c := exec.Command("sleep", "30")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c.Process.Pid
}

// Claim writes a complete state file that Read returns as written; a file whose up is gone, or
// that is unreadable, is replaced; Write replaces the content; Files lists the names in order.
func TestClaimWriteRead(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state") // Claim makes it
	st := State{Name: "b", Pid: exitedPid(t), Provider: "native", Topology: "single", Started: time.Now().Truncate(time.Second)}
	if _, err := Claim(dir, st); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir: %v, %v; want mode 0700", fi, err)
	}
	got, err := Read(Path(dir, "b"))
	if err != nil || got.Name != "b" || got.Pid != st.Pid || !got.Started.Equal(st.Started) || got.Description != nil {
		t.Fatalf("Read = %+v, %v; want %+v", got, err, st)
	}
	// Its up (st.Pid) is gone: the name is free again.
	st2 := st
	st2.Pid = exitedPid(t)
	if _, err := Claim(dir, st2); err != nil {
		t.Fatalf("Claim over a stale file: %v", err)
	}
	st2.Ready, st2.Addrs = time.Now(), []string{"127.0.0.1:7000"}
	st2.Description = &compose.Description{Kind: compose.KindSingle, Nodes: []compose.Node{{Addr: "127.0.0.1:7000", Role: compose.RoleMaster}}}
	if err := Write(dir, st2); err != nil {
		t.Fatal(err)
	}
	if got, err := Read(Path(dir, "b")); err != nil || got.Pid != st2.Pid || got.Description == nil || len(got.Addrs) != 1 {
		t.Errorf("Read after Write = %+v, %v", got, err)
	}
	if err := os.WriteFile(Path(dir, "a"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(Path(dir, "a")); err == nil {
		t.Error("Read of a broken file: no error")
	}
	if err := os.WriteFile(Path(dir, "c"), []byte(`{"name":"c"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(Path(dir, "c")); err == nil {
		t.Error("Read of a file without a pid: no error")
	}
	if _, err := Read(Path(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a missing file: %v; want fs.ErrNotExist", err)
	}
	files, err := Files(dir)
	if err != nil || len(files) != 3 || NameOf(files[0]) != "a" || NameOf(files[1]) != "b" || NameOf(files[2]) != "c" {
		t.Errorf("Files = %v, %v; want a, b, c (no temp files)", files, err)
	}
	if _, err := Claim(dir, State{Name: "a", Pid: exitedPid(t)}); err != nil {
		t.Errorf("Claim over an unreadable file: %v", err)
	}
	if files, err := Files(filepath.Join(dir, "none")); err != nil || len(files) != 0 {
		t.Errorf("Files of a missing dir = %v, %v; want none", files, err)
	}
}

// Of several claims racing for one name, each either wins or finds the file taken; the file
// left is one of theirs, complete.
func TestClaimRace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = Claim(dir, State{Name: "x", Pid: 100000 + i, Topology: "single"}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			// The pids are not lockbench up, so a taken file is stale and replaced; only losing
			// the race three times in a row may fail, with a message saying so.
			t.Logf("claim %d: %v", i, err)
		}
	}
	st, err := Read(Path(dir, "x"))
	if err != nil || st.Pid < 100000 || st.Pid >= 100000+len(errs) {
		t.Errorf("state after the race: %+v, %v; want one claimant's", st, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".up-*")); len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// A live process that is not lockbench up is neither an up nor a node: nothing claims its name,
// and Signal never reaches it.
func TestAliveChecksRefuseOtherProcesses(t *testing.T) {
	t.Parallel()
	pid := sleeper(t)
	if UpAlive(pid) || UpAlive(exitedPid(t)) || UpAlive(0) || UpAlive(-1) {
		t.Error("UpAlive of sleep, an exited pid or a non-pid: true")
	}
	st := State{Name: "n", Description: &compose.Description{Nodes: []compose.Node{{Addr: "127.0.0.1:30"}}}}
	if NodeAlive(st, pid) || NodeAlive(st, exitedPid(t)) {
		t.Error("NodeAlive of sleep 30 or an exited pid: true")
	}
	if err := Signal(pid, syscall.SIGKILL, UpAlive); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Signal to a process that is not up: %v; want os.ErrProcessDone", err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("sleep after a refused Signal: %v; want it running", err)
	}
	// The state of a live owner is kept: a claim fails with ErrRunning. This test binary is not
	// lockbench up either, so the owner is a shell named lockbench with "up" among its
	// arguments, what UpAlive looks for.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	fake := filepath.Join(t.TempDir(), "lockbench")
	if err := os.Symlink(sh, fake); err != nil {
		t.Fatal(err)
	}
	up := exec.Command(fake, "-c", "sleep 30; :", "up")
	up.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its sleep goes with it
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-up.Process.Pid, syscall.SIGKILL); up.Wait() }()
	// Start returns once exec has begun; the new command line shows a moment later.
	for deadline := time.Now().Add(5 * time.Second); !UpAlive(up.Process.Pid) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if !UpAlive(up.Process.Pid) {
		t.Fatalf("UpAlive of %q: false", cmdline(up.Process.Pid))
	}
	dir := t.TempDir()
	if _, err := Claim(dir, State{Name: "live", Pid: up.Process.Pid, Topology: "cluster"}); err != nil {
		t.Fatal(err)
	}
	owner, err := Claim(dir, State{Name: "live", Pid: exitedPid(t)})
	if !errors.Is(err, ErrRunning) || owner.Pid != up.Process.Pid {
		t.Errorf("Claim of a live up's name = %+v, %v; want ErrRunning and the owner", owner, err)
	}
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	if err := CheckName("sent-1"); err != nil {
		t.Errorf("CheckName(sent-1): %v", err)
	}
	err := CheckName("../etc")
	if want := `name "../etc": use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`; !errors.Is(err, ErrBadName) || err.Error() != want {
		t.Errorf("CheckName(../etc) = %v; want ErrBadName, %q", err, want)
	}
}
