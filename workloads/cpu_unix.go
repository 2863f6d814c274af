//go:build unix

package workloads

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + sys, every thread) this process has used so far, and
// false if the OS will not say.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
