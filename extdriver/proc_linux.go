package extdriver

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the adapter in a process group of its own, so that killing it kills what it
// started too, and has the kernel kill it if lockbench dies first: an adapter never outlives
// the run.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// kill kills the adapter's process group.
func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
}
