package rawio

import (
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// File reads and writes a non-blocking file (a pipe from os.Pipe, or one set non-blocking) with
// raw system calls, and closes it. Reads are serialised among themselves, and writes; a read and
// a write may run at once. It is safe for concurrent use.
type File struct {
	f  *os.File
	rc syscall.RawConn
	// One call's state per direction, and the function RawConn runs, made once, so that a read
	// or write allocates nothing.
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
	w := &File{f: f, rc: rc}
	w.r.trap, w.r.fn = unix.SYS_READ, w.r.readOnce
	w.w.trap, w.w.fn = unix.SYS_WRITE, w.w.writeAll
	return w
}

// Read reads what the pipe holds into p, waiting in the poller while it holds nothing; io.EOF
// once every writer has closed it.
func (w *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	w.rmu.Lock()
	defer w.rmu.Unlock()
	w.r.p, w.r.n, w.r.errno = p, 0, 0
	err := w.rc.Read(w.r.fn)
	n, errno := w.r.n, w.r.errno
	w.r.p = nil // the caller's buffer is not kept
	Acquired()
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
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.w.p, w.w.n, w.w.errno = p, 0, 0
	Released()
	err := w.rc.Write(w.w.fn)
	n, errno := w.w.n, w.w.errno
	w.w.p = nil
	if err == nil && errno != 0 {
		err = &os.PathError{Op: "write", Path: w.f.Name(), Err: errno}
	}
	return n, err
}

// SyscallConn returns the file's raw connection, for what else it needs (its flags).
func (w *File) SyscallConn() (syscall.RawConn, error) { return w.rc, nil }

// Close closes the file; a Read or Write waiting in the poller returns an error.
func (w *File) Close() error { return w.f.Close() }

// writeAll writes the rest of p; false (wait for the pipe) on EAGAIN.
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

// readOnce reads what is there into p; false (wait for the pipe) on EAGAIN.
func (o *op) readOnce(fd uintptr) bool {
	m, again, e := call(o.trap, fd, o.p)
	o.n, o.errno = m, e
	return !again
}

// call makes the read or write system call trap on fd with the bytes of p (not empty) as a raw
// system call, again after EINTR: the bytes done, or again when the pipe is not ready (EAGAIN),
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
