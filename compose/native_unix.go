//go:build unix && !linux

package compose

import "syscall"

// sysProcAttr puts redis-server in its own process group, so the Ctrl-C a terminal sends to
// lockbench's group does not stop Redis before lockbench has read its final stats. Only Linux
// can also tie the child's life to ours (Pdeathsig); elsewhere a lockbench killed hard leaves
// the server running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
