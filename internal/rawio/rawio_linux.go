package rawio

import (
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// RW reads and writes a non-blocking descriptor (a socket, a pipe) through its syscall.RawConn
// with raw system calls, waiting in Go's poller while it is not ready, and tells the race
// detector the kernel's order (Released, Acquired). Reads are serialised among themselves, and
// writes; a read and a write may run at once. It is safe for concurrent use. lockcore's raw
// connections and File are built on it.
type RW struct {
	rc syscall.RawConn
	// One call's state per direction, and the function RawConn runs, made once: a closure per
	// call escapes to the heap with its variables, three allocations per read and per write. The
	// mutexes only keep two callers of one direction apart; RawConn serialises the calls anyway.
	rmu, wmu sync.Mutex
	r, w     op
}

// op is one direction's call in progress: its buffer, the bytes done, its error.
type op struct {
	trap  uintptr // unix.SYS_READ or unix.SYS_WRITE
	p     []byte
	n     int
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// NewRW returns the RW of rc, whose descriptor must be in non-blocking mode.
func NewRW(rc syscall.RawConn) *RW {
	x := &RW{rc: rc}
	x.r.trap, x.r.fn = unix.SYS_READ, x.r.readOnce
	x.w.trap, x.w.fn = unix.SYS_WRITE, x.w.writeAll
	return x
}

// Read reads what the descriptor holds into p (not empty), waiting in the poller while it holds
// nothing: the bytes read (0 at the end of the stream), the system call's error, or RawConn's
// (the descriptor closed, a deadline).
func (x *RW) Read(p []byte) (n int, errno syscall.Errno, err error) {
	x.rmu.Lock()
	defer x.rmu.Unlock()
	x.r.p, x.r.n, x.r.errno = p, 0, 0
	err = x.rc.Read(x.r.fn)
	n, errno = x.r.n, x.r.errno
	x.r.p = nil // the caller's buffer is not kept
	Acquired()
	return n, errno, err
}

// Write writes all of p (not empty), waiting in the poller while the descriptor is full: the
// bytes written, the system call's error, or RawConn's.
func (x *RW) Write(p []byte) (n int, errno syscall.Errno, err error) {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.w.p, x.w.n, x.w.errno = p, 0, 0
	Released()
	err = x.rc.Write(x.w.fn)
	n, errno = x.w.n, x.w.errno
	x.w.p = nil
	return n, errno, err
}

// File reads and writes a non-blocking file (a pipe from os.Pipe, or one set non-blocking) with
// raw system calls (RW), and closes it. It is safe for concurrent use.
type File struct {
	f  *os.File
	rc syscall.RawConn
	rw *RW
}

// Wrap returns f read and written with raw system calls, or nil when f is not in non-blocking
// mode (then its Read and Write would block in the kernel, which needs the scheduler's
// system-call state): use f as it is.
func Wrap(f *os.File) *File {
	// Not f.Fd(): it would put the file in blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nb := false
	if cerr := rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nb = err == nil && fl&unix.O_NONBLOCK != 0
	}); cerr != nil || !nb {
		return nil
	}
	return &File{f: f, rc: rc, rw: NewRW(rc)}
}

// Read reads what the pipe holds into p, waiting in the poller while it holds nothing; io.EOF
// once every writer has closed it.
func (w *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, errno, err := w.rw.Read(p)
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, &os.PathError{Op: "read", Path: w.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p, waiting in the poller while the pipe is full.
func (w *File) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, errno, err := w.rw.Write(p)
	if err == nil && errno != 0 {
		err = &os.PathError{Op: "write", Path: w.f.Name(), Err: errno}
	}
	return n, err
}

// SyscallConn returns the file's raw connection, for what else it needs (its flags).
func (w *File) SyscallConn() (syscall.RawConn, error) { return w.rc, nil }

// Close closes the file; a Read or Write waiting in the poller returns an error.
func (w *File) Close() error { return w.f.Close() }

// writeAll writes the rest of p; false (wait for the descriptor) on EAGAIN.
func (o *op) writeAll(fd uintptr) bool {
	for o.n < len(o.p) {
		m, again, e := call(o.trap, fd, o.p[o.n:])
		if again || e != 0 {
			o.errno = e
			return !again
		}
		o.n += m
	}
	return true
}

// readOnce reads what is there into p; false (wait for the descriptor) on EAGAIN.
func (o *op) readOnce(fd uintptr) bool {
	m, again, e := call(o.trap, fd, o.p)
	o.n, o.errno = m, e
	return !again
}

// call makes the read or write system call trap on fd with the bytes of p (not empty) as a raw
// system call, again after EINTR: the bytes done, or again when it is not ready (EAGAIN),
// or the error.
func call(trap, fd uintptr, p []byte) (n int, again bool, errno syscall.Errno) {
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
