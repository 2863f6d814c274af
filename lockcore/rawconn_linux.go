package lockcore

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawConn is a TCP connection whose reads and writes go to the kernel as raw system calls on its
// non-blocking socket, waiting in Go's network poller when the socket is not ready, as a
// net.TCPConn does, but without entering the scheduler's system-call state.
//
// Why: a system call made through syscall.Syscall while every processor of the process is idle
// wakes the runtime's monitor thread (sysmon) from its deep sleep, which then polls every 20 µs
// until the process is idle again. A lock client between operations is idle, so at light load
// every request's write and every reply's read paid that: measured with lockbench's open loop
// (lockcore at 1000 acquisitions/s, placed on one CPU), 177-210 µs of client CPU per acquisition
// with the standard connection against 116-139 µs with this one, p99 312-516 against 220-280 µs
// (docs/findings.md). pacing's timer makes its calls raw for the same reason. A read or write
// on a non-blocking socket never blocks, so nothing needs the scheduler's system-call state;
// deadlines are kept by the poller, as for a net.Conn.
type rawConn struct {
	*net.TCPConn
	rc syscall.RawConn
}

func (c *rawConn) Write(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, again, e := rawCall(unix.SYS_WRITE, fd, p[n:])
			if again || e != 0 {
				errno = e
				return !again // again: the poller waits until the socket is writable
			}
			n += m
		}
		return true
	})
	if err == nil && errno != 0 {
		err = &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: errno}
	}
	return n, err
}

func (c *rawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		m, again, e := rawCall(unix.SYS_READ, fd, p)
		n, errno = m, e
		return !again // again: the poller waits until the socket is readable
	})
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// rawCall makes the read or write system call trap on fd with the bytes of p (not empty), as a
// raw system call, again after EINTR: the bytes done, or again when the socket is not ready
// (EAGAIN), or the error.
func rawCall(trap, fd uintptr, p []byte) (n int, again bool, errno syscall.Errno) {
	for {
		m, _, e := unix.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch e {
		case 0:
			return int(m), false, 0
		case unix.EINTR:
		case unix.EAGAIN:
			return 0, true, 0
		default:
			return 0, false, e
		}
	}
}

// rawDial is the DialCtxFn New gives a client it builds (Options.StandardConnIO says otherwise).
var rawDial = dialRaw

// dialRaw is a rueidis DialCtxFn: a TCP connection as rawConn, TLS over it when cfg is set (as
// rueidis's own dial does: the server name from addr unless cfg names one).
func dialRaw(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	var conn net.Conn = c
	if tc, ok := c.(*net.TCPConn); ok {
		if rc, err := tc.SyscallConn(); err == nil {
			conn = &rawConn{TCPConn: tc, rc: rc}
		}
	}
	if cfg == nil {
		return conn, nil
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}
