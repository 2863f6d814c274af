//go:build unix

package adapter

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/lockbench/lockbench/internal/rawio"
	"golang.org/x/sys/unix"
)

// blockingPipe is a pipe whose read end is blocking, as an adapter's stdin is when lockbench
// starts it.
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// nonblock reports whether f (an *os.File, or one rawio wraps) is in non-blocking mode.
func nonblock(t *testing.T, f interface {
	SyscallConn() (syscall.RawConn, error)
}) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fl int
	if err := rc.Control(func(fd uintptr) { fl, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		t.Fatal(err)
	}
	return fl&unix.O_NONBLOCK != 0
}

// TestPollable: a blocking pipe is read through a non-blocking dup, which done closes, leaving
// the pipe blocking and open; anything else is read as it is.
func TestPollable(t *testing.T) {
	r, w := blockingPipe(t)
	if nonblock(t, r) {
		t.Fatal("the test's pipe is non-blocking already")
	}
	p, done := pollable(r)
	if p == io.Reader(r) {
		t.Fatal("a blocking pipe was not given a pollable dup")
	}
	if !nonblock(t, p.(interface {
		SyscallConn() (syscall.RawConn, error)
	})) {
		t.Error("the dup is blocking")
	}
	if _, raw := p.(*rawio.File); !raw && runtime.GOOS == "linux" {
		t.Errorf("the dup is a %T; want it read with raw system calls", p)
	}
	if _, err := w.WriteString("1 ping\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := p.Read(buf); err != nil || string(buf[:n]) != "1 ping\n" {
		t.Fatalf("read through the dup: %q %v", buf[:n], err)
	}
	done()
	if nonblock(t, r) {
		t.Error("after done, the pipe is still non-blocking")
	}
	if _, err := w.WriteString("2 ping\n"); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "2 ping\n" {
		t.Fatalf("the pipe after done: %q %v", buf[:n], err)
	}

	// An os.Pipe is polled already; a regular file is not a pipe; a Reader is not a file.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, done := pollable(pr)
	if _, raw := got.(*rawio.File); !raw && runtime.GOOS == "linux" {
		t.Errorf("an os.Pipe is read through a %T; want raw system calls", got)
	}
	done()
	if !nonblock(t, pr) {
		t.Error("an os.Pipe was set blocking")
	}
	for _, in := range []io.Reader{f, io.LimitReader(pr, 1)} {
		if got, done := pollable(in); got != in {
			t.Errorf("%T: replaced", in)
		} else {
			done()
		}
	}
}

// TestRawOut: a blocking pipe (an adapter's stdout) is written with raw system calls through a
// non-blocking dup; done leaves it blocking and open. A file is written as it is.
func TestRawOut(t *testing.T) {
	r, w := blockingPipe(t)
	out, done := rawOut(w)
	if _, raw := out.(*rawio.File); !raw && runtime.GOOS == "linux" {
		t.Errorf("a blocking pipe is written through a %T; want raw system calls", out)
	}
	if _, err := io.WriteString(out, "1 ok\n"); err != nil {
		t.Fatal(err)
	}
	done()
	if nonblock(t, w) {
		t.Error("after done, the pipe is still non-blocking")
	}
	if _, err := w.WriteString("2 ok\n"); err != nil {
		t.Fatalf("the pipe after done: %v", err)
	}
	buf := make([]byte, 16)
	if n, err := io.ReadAtLeast(r, buf, 10); err != nil || string(buf[:n]) != "1 ok\n2 ok\n" {
		t.Fatalf("read %q %v; want both lines", buf[:n], err)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, done := rawOut(f); got != io.Writer(f) {
		t.Errorf("a file: written through a %T", got)
	} else {
		done()
	}
}
