//go:build unix

package docker

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with that id runs (signal 0 reaches it, or it exists
// but belongs to someone else).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
