package netem

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// sleeper waits for short delays precisely. Go's timers wake a process whose goroutines are all
// waiting through epoll_pwait, whose timeout counts whole milliseconds: on the 2-core test VM
// a 200us timer fired after ~1.1ms and a 1.5ms one after ~2.2ms, which would turn every
// sub-millisecond latency into a millisecond. A timerfd fires at nanosecond resolution, and
// reading it through the runtime's poller parks only the goroutine: no thread is held.
type sleeper struct {
	fd int
	f  *os.File
}

// newSleeper returns a sleeper, or nil when the kernel has no timerfd (sleep then uses a Go
// timer).
func newSleeper() *sleeper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	return &sleeper{fd: fd, f: os.NewFile(uintptr(fd), "netem-timerfd")}
}

// sleep waits for d. It cannot be interrupted; callers keep d short.
func (s *sleeper) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	if s == nil {
		time.Sleep(d)
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(s.fd, 0, &spec, nil); err != nil {
		time.Sleep(d)
		return
	}
	var buf [8]byte // the expiration count
	if _, err := s.f.Read(buf[:]); err != nil {
		time.Sleep(d)
	}
}

func (s *sleeper) close() {
	if s != nil {
		s.f.Close()
	}
}
