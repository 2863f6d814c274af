package pacing

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fineTimer sleeps on a timerfd: it fires at nanosecond resolution, and reading it through the
// runtime's poller parks only the calling goroutine, no thread.
//
// Its two system calls, timerfd_settime and read, go in raw (not through the scheduler's
// syscall state): the descriptor is non-blocking, so neither can block, and a call through
// syscall.Syscall made while every processor is idle wakes the runtime's monitor thread (sysmon)
// from its deep sleep, which then sleeps 20µs, looks, and sleeps again: two context switches
// and a timer of the kernel's per call. At light load the pacer's calls came after exactly such
// idle gaps, once or twice a slot.
type fineTimer struct {
	fd int
	f  *os.File
	rc syscall.RawConn
}

// newFineTimer returns a timerfd, or nil when the kernel has none (sleep then uses a Go timer).
func newFineTimer() *fineTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "pacing-timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	return &fineTimer{fd: fd, f: f, rc: rc}
}

// sleep sleeps for d, and returns false when interrupt ended it early (see interrupt).
func (t *fineTimer) sleep(d time.Duration) bool {
	if t == nil {
		time.Sleep(d)
		return true
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(max(d.Nanoseconds(), 1))} // 0 would disarm it
	if _, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(t.fd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0); e != 0 {
		time.Sleep(d)
		return true
	}
	var buf [8]byte // the expiration count
	var rerr syscall.Errno
	err := t.rc.Read(func(fd uintptr) bool {
		_, _, rerr = unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		return rerr != unix.EAGAIN // not yet: the poller parks the goroutine until it fires
	})
	switch {
	case err != nil: // the read deadline interrupt set, or the descriptor closed
		return false
	case rerr != 0:
		time.Sleep(time.Until(time.Now().Add(d))) // cannot happen with a timerfd; stay correct
	}
	return true
}

// interrupt makes the sleep in progress, and every later one, return false at once; resume
// undoes it. Both are safe for concurrent use with sleep.
func (t *fineTimer) interrupt() {
	if t != nil {
		t.f.SetReadDeadline(time.Unix(1, 0))
	}
}

func (t *fineTimer) resume() {
	if t != nil {
		t.f.SetReadDeadline(time.Time{})
	}
}

func (t *fineTimer) close() {
	if t != nil {
		t.f.Close()
	}
}
