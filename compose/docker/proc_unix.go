//go:build unix

package docker

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// processAlive reports whether a process with that id runs (signal 0 reaches it, or it exists
// but belongs to someone else).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// lockBuild takes a machine-wide lock (flock on a file in the temp dir) that serialises image
// builds, and returns its release.
func lockBuild() (func(), error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "lockbench-image-build.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing releases the lock
}
