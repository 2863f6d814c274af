package rawio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// rawPipe returns both ends of an os.Pipe through Wrap, closed when the test ends.
func rawPipe(t *testing.T) (r, w *File) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w = Wrap(pr), Wrap(pw)
	if r == nil || w == nil {
		t.Fatal("Wrap of an os.Pipe (non-blocking) returned nil")
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// Bytes written come out in order, a write larger than the pipe's buffer waits in the poller for
// the reader rather than failing with EAGAIN, and the reader sees io.EOF once the writer closes.
func TestPipeRoundTrip(t *testing.T) {
	r, w := rawPipe(t)
	want := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: 16 times a pipe's buffer
	errc := make(chan error, 1)
	go func() {
		n, err := w.Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		errc <- errors.Join(err, w.Close())
	}()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("Write: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d written, in order", len(got), len(want))
	}
}

// A read waiting on an empty pipe returns an error when the file is closed, rather than wait
// forever; a write to a pipe whose reader has gone fails (EPIPE) rather than wait.
func TestCloseEndsWaitsAndWritesFail(t *testing.T) {
	r, w := rawPipe(t)
	errc := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 8))
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond) // let it wait in the poller
	r.Close()
	select {
	case err := <-errc:
		if err == nil || err == io.EOF {
			t.Errorf("Read of a closed file: %v; want an error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a Read waiting on the pipe did not return after Close")
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, unix.EPIPE) {
		t.Errorf("Write with the reader gone: %v; want EPIPE", err)
	}
}

// A blocking file is not wrapped: its Read would block in the kernel.
func TestWrapRefusesBlocking(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if Wrap(f) != nil {
		t.Error("Wrap of a blocking file: want nil")
	}
}

// A read and a write allocate nothing: they run once per line batch on both sides of an
// external driver's pipe.
func TestNoAllocations(t *testing.T) {
	r, w := rawPipe(t)
	in, out := []byte("ping\n"), make([]byte, 16)
	if n := testing.AllocsPerRun(200, func() {
		if _, err := w.Write(in); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Read(out); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%.1f allocations per write and read; want 0", n)
	}
}
