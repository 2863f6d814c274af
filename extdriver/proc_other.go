//go:build !linux

package extdriver

import (
	"os/exec"
	"time"
)

// setProcAttr does nothing here: process groups and a parent-death signal are Linux's.
func setProcAttr(*exec.Cmd) {}

// kill kills the adapter.
func kill(cmd *exec.Cmd) { // nil: attached to streams, no process
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// processCPU is unknown here.
func processCPU(int) (time.Duration, bool) { return 0, false }
