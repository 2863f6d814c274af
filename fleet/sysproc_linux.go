package fleet

import "syscall"

// childAttr puts a child in its own process group, so a terminal's Ctrl-C reaches only the
// parent (which forwards one SIGINT; two would make the child quit without writing), and has
// the kernel kill it when the parent dies. Pdeathsig fires when the thread that started the
// child exits: Run keeps that thread locked, and so alive, until the children have ended.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
