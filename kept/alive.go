package kept

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// UpAlive reports whether pid is a running `lockbench up`. A pid that exists but runs something
// else was recycled after our up died: it is not alive for us, and nobody signals it.
func UpAlive(pid int) bool {
	args := cmdline(pid)
	if len(args) == 0 { // gone, a zombie, or not ours to see
		return false
	}
	self, _ := os.Executable()
	base := filepath.Base(args[0])
	if !strings.Contains(base, "lockbench") && (self == "" || base != filepath.Base(self)) {
		return false
	}
	return slices.Contains(args[1:], "up")
}

// NodeAlive reports whether pid is still a redis process started for st: its command line
// names redis and one of st's node ports. A recorded node pid that now runs anything else was
// recycled and is left alone.
func NodeAlive(st State, pid int) bool {
	args := cmdline(pid)
	if len(args) == 0 || !strings.Contains(filepath.Base(args[0]), "redis") {
		return false
	}
	if st.Description == nil {
		return true
	}
	line := " " + strings.Join(args, " ") + " "
	for _, n := range st.Description.Nodes {
		// Native servers get "--port N" on their command line; redis-server shows
		// "*:N" or "host:N" in its process title.
		if _, port, err := net.SplitHostPort(n.Addr); err == nil &&
			(strings.Contains(line, " "+port+" ") || strings.Contains(line, ":"+port+" ")) {
			return true
		}
	}
	return false
}

// cmdline returns the command line of a live process, or nil when it is gone or a zombie.
// Linux has /proc; elsewhere ps answers.
func cmdline(pid int) []string {
	if pid <= 0 {
		return nil
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err == nil {
		// A zombie's cmdline is empty, which reads as gone: it has ended, only unreaped.
		return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	}
	if _, serr := os.Stat("/proc/self/cmdline"); serr == nil {
		return nil // /proc works, so the process is gone
	}
	out, err := exec.Command("ps", "-ww", "-o", "stat=", "-o", "command=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return nil
	}
	fields := strings.Fields(string(bytes.TrimSpace(out)))
	if len(fields) < 2 || strings.HasPrefix(fields[0], "Z") {
		return nil
	}
	return fields[1:]
}

// Signal sends sig to pid if check still holds for it, and os.ErrProcessDone if it does not.
// On Linux os.FindProcess holds a pidfd, so a pid recycled between the check and the signal
// gets nothing.
func Signal(pid int, sig syscall.Signal, check func(int) bool) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	if !check(pid) {
		return os.ErrProcessDone
	}
	return p.Signal(sig)
}
