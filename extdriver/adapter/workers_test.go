package adapter_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/extdriver/adapter"
)

// goroutines is a Library that waits (not an Immediate one: Serve runs its calls off the
// reading goroutine) and records which goroutines ran its calls.
type goroutines struct {
	mutexOnly
	mu  sync.Mutex
	ids map[uint64]bool
}

func (g *goroutines) Hello() extdriver.Hello {
	return extdriver.Hello{Library: "goroutines", Version: "0", Kinds: []string{extdriver.KindMutex}}
}

func (g *goroutines) note() {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)] // "goroutine 42 [running]:..."
	f := bytes.Fields(buf)
	id, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		panic("goroutine id in " + string(buf))
	}
	g.mu.Lock()
	g.ids[id] = true
	g.mu.Unlock()
}

func (g *goroutines) Acquire(ctx context.Context, owner, name string) error {
	g.note()
	return g.mutexOnly.Acquire(ctx, owner, name)
}

func (g *goroutines) Release(ctx context.Context, owner, name string) error {
	g.note()
	return g.mutexOnly.Release(ctx, owner, name)
}

// TestServeKeepsGoroutines: one operation at a time, a library that waits has its calls run on
// the same few goroutines, not one new goroutine per operation, whose small stack a library's
// call path would grow, copying it, every time (workers.go).
func TestServeKeepsGoroutines(t *testing.T) {
	lib := &goroutines{mutexOnly: mutexOnly{adapter.NewMemory(0)}, ids: map[uint64]bool{}}
	send, next, end := serveLib(t, lib)
	next() // hello
	const cycles = 200
	for i := range cycles {
		send(strconv.Itoa(2*i) + " acquire o1 x -1")
		if got, want := next(), strconv.Itoa(2*i)+" ok"; got != want {
			t.Fatalf("acquire: %q, want %q", got, want)
		}
		send(strconv.Itoa(2*i+1) + " release o1 x")
		if got, want := next(), strconv.Itoa(2*i+1)+" ok"; got != want {
			t.Fatalf("release: %q, want %q", got, want)
		}
	}
	if err := end(); err != nil {
		t.Fatal(err)
	}
	// A goroutine is kept once its operation is done, but it may not be back waiting for the
	// next when that comes: a few new ones, never one per operation.
	if n := len(lib.ids); n > 10 {
		t.Errorf("%d operations, one at a time, ran on %d goroutines; want them kept (a few)", 2*cycles, n)
	}
}
