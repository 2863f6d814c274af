package lockcore

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

// TestRawConn: a raw connection speaks to a real Redis (a request, its reply, one larger than a
// socket buffer in both directions), keeps its deadlines (a read past one fails as a timeout,
// as net.Conn's does), and reads io.EOF when the server closes it.
func TestRawConn(t *testing.T) {
	srv := redistest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := dialRaw(ctx, srv.Addr(), &net.Dialer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*rawConn); !ok {
		t.Fatalf("dialRaw gave a %T", c)
	}
	r := bufio.NewReader(c)
	line := func() string {
		t.Helper()
		s, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		t.Fatal(err)
	}
	if got := line(); got != "+PONG\r\n" {
		t.Fatalf("PING: %q", got)
	}
	// A request and its reply allocate nothing (RawConn's functions are bound once).
	ping, pong := []byte("PING\r\n"), make([]byte, 64)
	if allocs := testing.AllocsPerRun(100, func() {
		if _, err := c.Write(ping); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Read(pong); err != nil || string(pong[:n]) != "+PONG\r\n" {
			t.Fatalf("PING: %q, %v", pong[:n], err)
		}
	}); allocs != 0 {
		t.Errorf("%v allocations per PING round trip; want none", allocs)
	}
	// 4 MB each way: many partial writes and reads.
	big := make([]byte, 4<<20)
	for i := range big {
		big[i] = 'a' + byte(i%26)
	}
	go func() {
		_, _ = c.Write(append([]byte("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$4194304\r\n"), append(big, "\r\n"+"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n"...)...))
	}()
	if got := line(); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	if got := line(); got != "$4194304\r\n" {
		t.Fatalf("GET: %q", got)
	}
	back := make([]byte, len(big)+2)
	if _, err := io.ReadFull(r, back); err != nil {
		t.Fatal(err)
	}
	if string(back[:len(big)]) != string(big) {
		t.Fatal("GET returned other bytes than SET stored")
	}
	// A deadline passed: the read fails as a timeout.
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err = c.Read(make([]byte, 16))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v; want a timeout", err)
	}
	c.SetReadDeadline(time.Time{})
	// The server closes the connection: EOF.
	if _, err := io.WriteString(c, "QUIT\r\n"); err != nil {
		t.Fatal(err)
	}
	if got := line(); got != "+OK\r\n" {
		t.Fatalf("QUIT: %q", got)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("after QUIT: %v, want io.EOF", err)
	}
}

// TestNewDialsRaw: a Client New builds dials its connections raw, unless StandardConnIO or a
// DialCtxFn of the caller's says otherwise; its locks work either way.
func TestNewDialsRaw(t *testing.T) {
	e := newEnv(t)
	var dials atomic.Int64
	saved := rawDial
	rawDial = func(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
		dials.Add(1)
		return dialRaw(ctx, addr, d, cfg)
	}
	t.Cleanup(func() { rawDial = saved })
	var own atomic.Int64 // dials of a caller's own (deprecated) DialFn
	ownDial := func(addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
		own.Add(1)
		return d.Dial("tcp", addr)
	}
	for _, c := range []struct {
		name string
		opt  Options
		raw  bool
		own  bool
	}{
		{"default", Options{}, true, false},
		{"StandardConnIO", Options{StandardConnIO: true}, false, false},
		// rueidis prefers DialCtxFn to DialFn: setting one over a caller's DialFn would drop it.
		{"DialFn", Options{Redis: rueidis.ClientOption{DialFn: ownDial}}, false, true},
	} {
		dials.Store(0)
		own.Store(0)
		cl := e.client(t, c.opt)
		ctx := ctxT(t, 10*time.Second)
		o := cl.NewOwner()
		m := cl.Mutex("raw-" + c.name)
		if err := m.Lock(ctx, o); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := m.Unlock(ctx, o); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := dials.Load() > 0; got != c.raw {
			t.Errorf("%s: %d raw dials", c.name, dials.Load())
		}
		if got := own.Load() > 0; got != c.own {
			t.Errorf("%s: %d dials of the caller's DialFn", c.name, own.Load())
		}
	}
}
