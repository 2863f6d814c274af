package compose

import "syscall"

// sysProcAttr puts redis-server in its own process group, so the Ctrl-C a terminal sends to
// lockbench's group does not stop Redis before lockbench has read its final stats (lockbench
// stops it itself), and has the kernel SIGKILL it if lockbench dies without cleaning up.
//
// Pdeathsig fires when the OS thread that started the child exits, not the process; the Go
// runtime only ends threads of goroutines that exit while locked to them, which starting a
// server never does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
