//go:build unix

package adapter

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pollable returns r read through Go's network poller when r is a blocking pipe or socket (an
// adapter's stdin as lockbench starts it): a dup of its descriptor set non-blocking, which done
// closes, setting the description blocking again (it is r's too). Otherwise r itself, and a
// done that does nothing.
//
// Why: os.Stdin reads with a blocking read(2), and a goroutine in a blocking system call keeps
// its P until sysmon takes it back (after 20 µs, or up to 10 ms when sysmon has backed off on an
// idle process). With GOMAXPROCS 1 (an adapter placed on one CPU), the goroutines whose Redis
// replies have come wait for that, and Serve's reading goroutine sits in that read whenever no
// request is buffered, i.e. nearly always. Measured with the redsync adapter placed on one CPU,
// one acquire at a time 1 ms apart: p50 148-194 µs through the poller, 275-310 µs blocking.
func pollable(r io.Reader) (io.Reader, func()) {
	nothing := func() {}
	f, ok := r.(*os.File)
	if !ok {
		return r, nothing
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return r, nothing
	}
	dup := -1
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil {
			return
		}
		if t := st.Mode & unix.S_IFMT; t != unix.S_IFIFO && t != unix.S_IFSOCK {
			return // a terminal or a file: its description may be the shell's too
		}
		if fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
			return // already non-blocking (an os.Pipe): os.File polls it
		}
		d, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return
		}
		if unix.SetNonblock(d, true) != nil {
			unix.Close(d)
			return
		}
		dup = d
	})
	if dup < 0 {
		return r, nothing
	}
	p := os.NewFile(uintptr(dup), f.Name())
	return p, func() {
		if rc, err := p.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { _ = unix.SetNonblock(int(fd), false) })
		}
		p.Close()
	}
}
