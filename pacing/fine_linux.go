package pacing

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// fineTimer sleeps on a timerfd: it fires at nanosecond resolution, and reading it through the
// runtime's poller parks only the calling goroutine, no thread.
type fineTimer struct {
	fd int
	f  *os.File
}

// newFineTimer returns a timerfd, or nil when the kernel has none (sleep then uses a Go timer).
func newFineTimer() *fineTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	return &fineTimer{fd: fd, f: os.NewFile(uintptr(fd), "pacing-timerfd")}
}

func (t *fineTimer) sleep(d time.Duration) {
	if t == nil {
		time.Sleep(d)
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(t.fd, 0, &spec, nil); err != nil {
		time.Sleep(d)
		return
	}
	var buf [8]byte // the expiration count
	if _, err := t.f.Read(buf[:]); err != nil {
		time.Sleep(d)
	}
}

func (t *fineTimer) close() {
	if t != nil {
		t.f.Close()
	}
}
