package compose

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary, run again as a child, act as a lockbench that starts a server
// and is then killed hard.
const helperEnv = "LOCKBENCH_COMPOSE_PDEATHSIG_HELPER"

// TestServerDiesWithLockbench checks Pdeathsig: a lockbench killed with SIGKILL (no Close) must
// not leave its redis-server running.
func TestServerDiesWithLockbench(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		s, err := StartSingle(context.Background(), NativeOptions{})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("pid", s.Pid())
		time.Sleep(time.Minute) // until the parent test kills us
		s.Close()
		os.Exit(1)
	}
	requireRedis(t)

	helper := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithLockbench$", "-test.count=1")
	helper.Env = append(os.Environ(), helperEnv+"=1")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		helper.Process.Kill()
		helper.Wait()
		t.Fatalf("helper said %q: %v", line, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pid ")))
	if err != nil {
		helper.Process.Kill()
		helper.Wait()
		t.Fatalf("helper said %q", line)
	}

	helper.Process.Kill()
	helper.Wait()

	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL) // started by our helper: ours to clean up
			t.Fatalf("redis-server %d outlived the lockbench that started it", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs; a zombie waiting for init to reap it does not count.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name, which may itself contain spaces.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
