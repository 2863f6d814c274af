package lockcore

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"syscall"

	"github.com/lockbench/lockbench/internal/rawio"
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
	// rw makes the calls (internal/rawio: one call's state per direction bound once, so that a
	// read or write allocates nothing; the race detector told the kernel's order). rueidis has
	// one reader and one writer per connection, so its direction locks are never contended.
	rw *rawio.RW
}

func newRawConn(tc *net.TCPConn, rc syscall.RawConn) *rawConn {
	return &rawConn{TCPConn: tc, rw: rawio.NewRW(rc)}
}

func (c *rawConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, errno, err := c.rw.Write(p)
	if err == nil && errno != 0 {
		err = &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: errno}
	}
	return n, err
}

func (c *rawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, errno, err := c.rw.Read(p)
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
