//go:build unix

package crosscheck

import (
	"os"
	"syscall"
)

func mmap(f *os.File, n int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

func munmap(b []byte) error { return syscall.Munmap(b) }
