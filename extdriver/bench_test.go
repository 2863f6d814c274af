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

	"github.com/lockbench/lockbench/extdriver"
)

// BenchmarkNullAdapter is one acquire and one release through the protocol to the null adapter
// (this test binary), with as many operations in flight as RunParallel's goroutines: the
// protocol's cost per cycle, which lockbench reports beside external drivers as exec:null.
func BenchmarkNullAdapter(b *testing.B) {
	ctx := context.Background()
	a, err := extdriver.Start(ctx, selfOptions(""))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	var owners atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(32) // many operations in flight, as in a run
	b.RunParallel(func(pb *testing.PB) {
		owner := "o" + strconv.FormatInt(owners.Add(1), 10)
		for pb.Next() {
			if ok, err := a.Acquire(ctx, owner, owner, -1); !ok || err != nil {
				b.Error(ok, err)
				return
			}
			if err := a.Release(owner, owner); err != nil {
				b.Error(err)
				return
			}
		}
	})
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
