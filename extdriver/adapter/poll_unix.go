//go:build unix

package adapter

import (
	"io"
	"os"

	"github.com/lockbench/lockbench/internal/rawio"
	"golang.org/x/sys/unix"
)

// pollable returns r read through Go's network poller, with raw system calls (rawio), when r is
// a pipe or socket (an adapter's stdin as lockbench starts it; a blocking one through a
// non-blocking dup of its descriptor, which done closes, setting the description blocking
// again: it is r's too). Otherwise r itself, and a done that does nothing.
//
// Why the poller: os.Stdin reads with a blocking read(2), and a goroutine in a blocking system
// call keeps its P until sysmon takes it back (after 20 µs, or up to 10 ms when sysmon has
// backed off on an idle process). With GOMAXPROCS 1 (an adapter placed on one CPU), the
// goroutines whose Redis replies have come wait for that, and Serve's reading goroutine sits in
// that read whenever no request is buffered, i.e. nearly always. Measured with the redsync
// adapter placed on one CPU, one acquire at a time 1 ms apart: p50 148-194 µs through the
// poller, 275-310 µs blocking. Why raw: see package rawio.
func pollable(r io.Reader) (io.Reader, func()) {
	rf, p, done := raw(r)
	switch {
	case rf != nil:
		return rf, done
	case p != nil:
		return p, done
	}
	return r, done
}

// rawOut returns w written with raw system calls (rawio) when it is a pipe or socket (an
// adapter's stdout as lockbench starts it), as pollable does for stdin; done after the last
// write. A write to a pipe with room never waits, so this spares each write the scheduler's
// system-call state and nothing else; where rawio cannot take it, w stays as it was.
func rawOut(w io.Writer) (io.Writer, func()) {
	rf, _, done := raw(w)
	if rf == nil {
		done()
		return w, func() {}
	}
	return rf, done
}

// raw returns v, when it is a pipe or socket file, in non-blocking mode (see nonblocking) and
// wrapped with rawio, or, where rawio cannot take it, in non-blocking mode alone (p); neither
// for anything else. done undoes what nonblocking did.
func raw(v any) (rf *rawio.File, p *os.File, done func()) {
	f, ok := v.(*os.File)
	if !ok {
		return nil, nil, func() {}
	}
	p, done = nonblocking(f)
	if p == nil {
		return nil, nil, done
	}
	if rf = rawio.Wrap(p); rf != nil {
		return rf, nil, done
	}
	return nil, p, done
}

// nonblocking returns f when it is a non-blocking pipe or socket already (an os.Pipe), a
// non-blocking dup of its descriptor when it is a blocking one, which done closes, setting the
// description blocking again; nil when it is neither (a terminal or a file: its description may
// be the shell's too) or that fails.
func nonblocking(f *os.File) (*os.File, func()) {
	nothing := func() {}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, nothing
	}
	dup, already := -1, false
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil {
			return
		}
		if t := st.Mode & unix.S_IFMT; t != unix.S_IFIFO && t != unix.S_IFSOCK {
			return
		}
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			return
		}
		if fl&unix.O_NONBLOCK != 0 {
			already = true
			return
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
	switch {
	case already:
		return f, nothing
	case dup < 0:
		return nil, nothing
	}
	p := os.NewFile(uintptr(dup), f.Name())
	return p, func() {
		if rc, err := p.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { _ = unix.SetNonblock(int(fd), false) })
		}
		p.Close()
	}
}
