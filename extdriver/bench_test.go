package extdriver_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/extdriver/adapter"
	"github.com/lockbench/lockbench/pin"
)

// attachMemory runs adapter.Serve over the null adapter's lock (adapter.Memory) in this process,
// on two OS pipes as a child's stdin and stdout would be, and attaches lockbench's side to it:
// the protocol's cost without a second process's scheduling.
func attachMemory(tb testing.TB) *extdriver.Adapter {
	tb.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		err := adapter.Serve(inR, outW, adapter.NewMemory(0))
		outW.Close()
		inR.Close()
		done <- err
	}()
	a, err := extdriver.Attach(context.Background(), extdriver.Options{Name: "in-process", Argv: []string{"in-process"}},
		inW, outR, func() error { return <-done })
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := a.Close(); err != nil {
			tb.Error(err)
		}
		outR.Close()
	})
	return a
}

// BenchmarkProtocol is one acquire and one release of an owner's own lock through the protocol
// to the null adapter's lock: ns/op and allocs/op are per cycle (two requests), ops/s counts
// requests. "process" is the null adapter as a child process (this test binary), as lockbench
// runs it; "in-process" is adapter.Serve on two pipes in this process. inflight=N has N
// owners with a request in flight at once (a run's --concurrency); 1 is the round trip.
// "placed" is "process" with this process and the adapter on one CPU and GOMAXPROCS 1, as
// lockbench run --pin auto places the client on a 2-CPU machine (the adapter inherits it).
func BenchmarkProtocol(b *testing.B) {
	for _, inflight := range []int{1, 64} {
		b.Run("process/inflight="+strconv.Itoa(inflight), func(b *testing.B) {
			a := start(b, selfOptions(""))
			benchCycles(b, a, inflight)
		})
		b.Run("placed/inflight="+strconv.Itoa(inflight), func(b *testing.B) {
			placeOnOneCPU(b)
			a := start(b, selfOptions(""))
			benchCycles(b, a, inflight)
		})
		b.Run("in-process/inflight="+strconv.Itoa(inflight), func(b *testing.B) {
			benchCycles(b, attachMemory(b), inflight)
		})
	}
}

// placeOnOneCPU places this process on one of its CPUs (pin.Self: GOMAXPROCS 1) until the
// benchmark ends; the adapter processes it starts meanwhile inherit the CPU.
func placeOnOneCPU(b *testing.B) {
	avail, err := pin.Available()
	if err != nil {
		b.Skip(err)
	}
	restore, err := pin.Self(avail[:1])
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(restore)
}

func benchCycles(b *testing.B, a *extdriver.Adapter, inflight int) {
	ctx := context.Background()
	var owners atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	t0 := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := "o" + strconv.FormatInt(owners.Add(1), 10)
			for next.Add(1) <= int64(b.N) {
				if ok, err := a.Acquire(ctx, owner, owner, -1); !ok || err != nil {
					b.Error(ok, err)
					return
				}
				if err := a.Release(owner, owner); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(2*b.N)/time.Since(t0).Seconds(), "ops/s")
}

// BenchmarkTransport compares the two transports the protocol could use, pipes (stdin/stdout)
// and a Unix socket, with an echo peer in the same process and many lines in flight: the choice
// of stdin/stdout rests on these figures (docs/external-drivers.md).
func BenchmarkTransport(b *testing.B) {
	b.Run("pipe", func(b *testing.B) {
		r1, w1, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		r2, w2, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		benchEcho(b, w1, r2, r1, w2)
	})
	b.Run("unix", func(b *testing.B) {
		ln, err := net.Listen("unix", filepath.Join(b.TempDir(), "s"))
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, _ := ln.Accept()
			accepted <- c
		}()
		c, err := net.Dial("unix", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		s := <-accepted
		benchEcho(b, c, c, s, s)
	})
}

// benchEcho sends lines on out, a peer echoes them from peerIn to peerOut, replies come on in.
func benchEcho(b *testing.B, out io.WriteCloser, in io.Reader, peerIn io.Reader, peerOut io.WriteCloser) {
	go func() { // the peer: echo, flushing when no more input is buffered
		r := bufio.NewReader(peerIn)
		w := bufio.NewWriter(peerOut)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				peerOut.Close()
				return
			}
			w.Write(line)
			if r.Buffered() == 0 {
				w.Flush()
			}
		}
	}()
	var mu sync.Mutex
	waiters := map[string]chan struct{}{}
	go func() {
		r := bufio.NewScanner(in)
		for r.Scan() {
			mu.Lock()
			ch := waiters[r.Text()]
			mu.Unlock()
			ch <- struct{}{}
		}
	}()
	lines := make(chan []byte, 1024)
	go func() {
		w := bufio.NewWriter(out)
		for l := range lines {
			w.Write(l)
			for n := len(lines); n > 0; n-- {
				w.Write(<-lines)
			}
			w.Flush()
		}
		out.Close()
	}()
	var ids atomic.Int64
	b.SetParallelism(32) // many operations in flight, as in a run
	b.RunParallel(func(pb *testing.PB) {
		id := strconv.FormatInt(ids.Add(1), 10)
		ch := make(chan struct{}, 1)
		mu.Lock()
		waiters[id] = ch
		mu.Unlock()
		line := []byte(id + "\n")
		for pb.Next() {
			lines <- line
			<-ch
		}
	})
	close(lines)
}
