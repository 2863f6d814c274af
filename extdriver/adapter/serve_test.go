package adapter_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/extdriver/adapter"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve runs Serve on Memory over pipes; send writes a request, next reads a reply line.
func serve(t *testing.T) (send func(string), next func() string, end func() error) {
	t.Helper()
	return serveLib(t, adapter.NewMemory(0))
}

// serveLib is serve over lib.
func serveLib(t *testing.T, lib adapter.Library) (send func(string), next func() string, end func() error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := adapter.Serve(inR, outW, lib)
		outW.Close()
		done <- err
	}()
	lines := bufio.NewScanner(outR)
	next = func() string {
		if !lines.Scan() {
			t.Fatalf("no line: %v", lines.Err())
		}
		return lines.Text()
	}
	send = func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	end = func() error {
		inW.Close()
		go io.Copy(io.Discard, outR)
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return after its input ended")
			return nil
		}
	}
	return send, next, end
}

// TestServe: hello first, then replies by id, a waiter cancelled, a non-owner refused.
func TestServe(t *testing.T) {
	send, next, end := serve(t)
	if _, k, err := extdriver.ParseHello(next()); err != nil || k != extdriver.Kinds&^drivers.KindFair { // Memory is not fair
		t.Fatalf("hello: %v %v", k, err)
	}
	send("1 acquire a k -1")
	if got := next(); got != "1 ok" {
		t.Fatalf("acquire: %q", got)
	}
	send("2 acquire b k -1") // waits: a holds k
	send("3 ping")
	if got := next(); got != "3 ok" {
		t.Fatalf("ping while 2 waits: %q", got)
	}
	send("2 cancel")
	if got := next(); got != "2 timeout" {
		t.Fatalf("cancelled acquire: %q", got)
	}
	send("4 release b k")
	if got := next(); !strings.HasPrefix(got, "4 notowner ") {
		t.Fatalf("non-owner release: %q", got)
	}
	send("5 release a k")
	if got := next(); got != "5 ok" {
		t.Fatalf("release: %q", got)
	}
	send("6 acquire c k -1")
	if got := next(); got != "6 ok" {
		t.Fatalf("acquire after release: %q", got)
	}
	send("7 acquire d k -1") // still waiting when the input ends: Serve stops it and returns
	if err := end(); err != nil {
		t.Fatalf("Serve at the end of its input: %v", err)
	}
}

func TestServeRefusesGarbage(t *testing.T) {
	send, next, end := serve(t)
	next() // hello
	send("1 lock k")
	if err := end(); err == nil || !strings.Contains(err.Error(), `not a request: "1 lock k"`) {
		t.Fatalf("Serve on garbage: %v", err)
	}
}

func TestWithFault(t *testing.T) {
	for _, ok := range []string{"", "nolock", "die-after=3", "hang-after=1", "garbage-after=10"} {
		if _, err := adapter.WithFault(adapter.NewMemory(0), ok); err != nil {
			t.Errorf("WithFault(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"die", "die-after=0", "hang-after=x", "explode=1"} {
		if _, err := adapter.WithFault(adapter.NewMemory(0), bad); err == nil {
			t.Errorf("WithFault(%q) accepted", bad)
		}
	}
}

// TestServeKinds: the requests of rw, multi and fenced reach the library, and replies carry
// what they must (a fenced grant's token); a hello claiming a kind the library lacks is refused.
func TestServeKinds(t *testing.T) {
	send, next, end := serve(t)
	next() // hello
	for _, c := range []struct{ req, want string }{
		{"1 facquire a f -1", "1 ok 1"}, // the first grants of this Memory: tokens 1, 2
		{"2 release a f", "2 ok"},
		{"3 facquire b f -1", "3 ok 2"},
		{"4 release b f", "4 ok"},
		{"5 racquire a r -1", "5 ok"},
		{"6 racquire b r 0", "6 ok"},
		{"7 wacquire c r 0", "7 timeout"},
		{"8 rrelease a r", "8 ok"},
		{"9 rrelease b r", "9 ok"},
		{"10 wacquire c r 0", "10 ok"},
		{"11 wrelease c r", "11 ok"},
		{"12 macquire a -1 x y", "12 ok"},
		{"13 macquire b 0 z y", "13 timeout"},
		{"14 acquire c z 0", "14 ok"},
		{"15 release c z", "15 ok"},
		{"16 mrelease a x y", "16 ok"},
	} {
		send(c.req)
		if got := next(); got != c.want {
			t.Fatalf("%q: %q; want %q", c.req, got, c.want)
		}
	}
	if err := end(); err != nil {
		t.Fatal(err)
	}
	claims := mutexOnly{adapter.NewMemory(0)}
	if err := adapter.Serve(strings.NewReader(""), io.Discard, claims); err == nil || !strings.Contains(err.Error(), `claims kind "rw"`) {
		t.Fatalf("Serve of a hello claiming rw without RWLibrary: %v", err)
	}
}

// mutexOnly hides Memory's kinds but keeps its hello, which claims them all: a lie.
type mutexOnly struct{ lib adapter.Library }

func (m mutexOnly) Hello() extdriver.Hello { return m.lib.Hello() }
func (m mutexOnly) Acquire(ctx context.Context, owner, name string) error {
	return m.lib.Acquire(ctx, owner, name)
}
func (m mutexOnly) Release(ctx context.Context, owner, name string) error {
	return m.lib.Release(ctx, owner, name)
}

// gated is a Library whose acquires all wait for one gate: a library whose Redis replies come
// in together.
type gated struct{ gate chan struct{} }

func (g gated) Hello() extdriver.Hello {
	return extdriver.Hello{Library: "gated", Version: "0", Kinds: []string{extdriver.KindMutex}}
}

func (g gated) Acquire(ctx context.Context, _, _ string) error {
	select {
	case <-g.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g gated) Release(context.Context, string, string) error { return nil }

// lockedWriter counts writes and the lines in them.
type lockedWriter struct {
	mu            sync.Mutex
	writes, lines int
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	w.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

func (w *lockedWriter) counts() (writes, lines int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes, w.lines
}

// TestServeCoalescesReplies: with one P (an adapter placed on one CPU), the replies of acquires
// that end together, each on a goroutine of its own, share a few writes instead of one each.
func TestServeCoalescesReplies(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const n = 64
	lib := gated{gate: make(chan struct{})}
	inR, inW := io.Pipe()
	w := &lockedWriter{}
	done := make(chan error, 1)
	go func() { done <- adapter.Serve(inR, w, lib) }()
	var req []byte
	for i := range n {
		req = fmt.Appendf(req, "%d acquire o%d k%d -1\n", i+1, i, i)
	}
	if _, err := inW.Write(req); err != nil {
		t.Fatal(err)
	}
	// Serve has read them all once a ping after them is answered.
	if _, err := io.WriteString(inW, "1000 ping\n"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, lines := w.counts(); lines == 2 { // the hello and the pong
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no pong")
		}
	}
	before, _ := w.counts()
	close(lib.gate)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, lines := w.counts(); lines == 2+n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not every acquire answered")
		}
	}
	writes, _ := w.counts()
	if writes-before > n/8 {
		t.Errorf("%d writes for the %d replies of acquires that ended together; want a few", writes-before, n)
	}
	t.Logf("%d replies in %d writes", n, writes-before)
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
