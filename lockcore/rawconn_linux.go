package lockcore

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"syscall"
	"unsafe"

	"github.com/lockbench/lockbench/internal/rawio"
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
	// One call's state per direction, and the function RawConn runs, made once: a closure per
	// call escaped to the heap with its variables, three allocations per read and per write.
	// The mutexes only keep two callers of one direction apart (rueidis has one reader and one
	// writer per connection, so they are never contended); RawConn serialises the calls anyway.
	rmu, wmu sync.Mutex
	r, w     rawOp
}

// rawOp is one direction's call in progress: its buffer, the bytes done, its error.
type rawOp struct {
	trap  uintptr // unix.SYS_READ or unix.SYS_WRITE
	p     []byte
	n     int
	errno syscall.Errno
	fn    func(fd uintptr) bool // the rawOp's read or write, bound once
}

func newRawConn(tc *net.TCPConn, rc syscall.RawConn) *rawConn {
	c := &rawConn{TCPConn: tc, rc: rc}
	c.r.trap, c.r.fn = unix.SYS_READ, c.r.readOnce
	c.w.trap, c.w.fn = unix.SYS_WRITE, c.w.writeAll
	return c
}

// writeAll writes the rest of p; false (wait for the socket) on EAGAIN.
func (o *rawOp) writeAll(fd uintptr) bool {
	for o.n < len(o.p) {
		m, again, e := rawCall(o.trap, fd, o.p[o.n:])
		if again || e != 0 {
			o.errno = e
			return !again
		}
		o.n += m
	}
	return true
}

// readOnce reads what is there into p; false (wait for the socket) on EAGAIN.
func (o *rawOp) readOnce(fd uintptr) bool {
	m, again, e := rawCall(o.trap, fd, o.p)
	o.n, o.errno = m, e
	return !again
}

func (c *rawConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.p, c.w.n, c.w.errno = p, 0, 0
	rawio.Released() // the race detector's view of the kernel's order (rawio/race.go)
	err := c.rc.Write(c.w.fn)
	n, errno := c.w.n, c.w.errno
	c.w.p = nil // the caller's buffer is not kept
	if err == nil && errno != 0 {
		err = &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: errno}
	}
	return n, err
}

func (c *rawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.r.p, c.r.n, c.r.errno = p, 0, 0
	err := c.rc.Read(c.r.fn)
	n, errno := c.r.n, c.r.errno
	c.r.p = nil
	rawio.Acquired()
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
			conn = newRawConn(tc, rc)
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
