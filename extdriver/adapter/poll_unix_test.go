//go:build unix

package adapter

import (
	"io"
	"os"
	"path/filepath"
	"testing"

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

func nonblock(t *testing.T, f *os.File) bool {
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
	if !nonblock(t, p.(*os.File)) {
		t.Error("the dup is blocking")
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
	for _, in := range []io.Reader{pr, f, io.LimitReader(pr, 1)} {
		if got, done := pollable(in); got != in {
			t.Errorf("%T: replaced", in)
		} else {
			done()
		}
	}
}
