package netem_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/netem"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// silence is how long a test waits for a reply a fault keeps from coming: long enough that a
// reply that was not held would have come (a loopback round trip takes well under a
// millisecond), short enough to keep the tests quick. A reply that must come gets 5 s.
const silence = 300 * time.Millisecond

// isTimeout says whether err is a client giving up waiting: a deadline, not a broken connection.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// direct returns a go-redis client that does not go through any Net, to see what ran.
func direct(t *testing.T, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// send writes one inline command on p, without waiting for the reply.
func (p *pinger) send(t *testing.T, cmd string) {
	t.Helper()
	p.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := p.c.Write([]byte(cmd + "\r\n")); err != nil {
		t.Fatalf("send %q: %v", cmd, err)
	}
}

// read waits up to wait for one reply line on p.
func (p *pinger) read(wait time.Duration) (string, error) {
	p.c.SetReadDeadline(time.Now().Add(wait))
	return p.r.ReadString('\n')
}

// wantClosed checks that p's connection was closed under it: a read gets EOF or a reset, not a
// reply and not a timeout.
func wantClosed(t *testing.T, what string, p *pinger) {
	t.Helper()
	if reply, err := p.read(5 * time.Second); err == nil || isTimeout(err) {
		t.Errorf("%s: read %q, %v; want the connection closed", what, reply, err)
	}
}

// incrClients are the two client libraries lockbench's drivers use, each sending INCR through
// n with a 300 ms wait for the reply and no retries: a call that fails sent its command once.
var incrClients = []struct {
	name string
	dial func(t *testing.T, n *netem.Net, addr string) func(key string) (int64, error)
}{
	{"go-redis", func(t *testing.T, n *netem.Net, addr string) func(string) (int64, error) {
		rdb := redis.NewClient(&redis.Options{Addr: addr, Dialer: n.Dial, ReadTimeout: silence, MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		return func(key string) (int64, error) { return rdb.Incr(t.Context(), key).Result() }
	}},
	{"rueidis", func(t *testing.T, n *netem.Net, addr string) func(string) (int64, error) {
		rdb, err := rueidis.NewClient(rueidis.ClientOption{
			InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true, DisableRetry: true,
			// One pipelined connection, made by NewClient. By default rueidis spreads commands
			// over connections it dials on first use: a command sent on one dialled during the
			// drop waits for the handshake's lost reply and is never sent, so it does not run.
			PipelineMultiplex: -1,
			DialCtxFn: func(ctx context.Context, addr string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
				return n.Dial(ctx, "tcp", addr)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rdb.Close)
		return func(key string) (int64, error) {
			ctx, cancel := context.WithTimeout(t.Context(), silence)
			defer cancel()
			return rdb.Do(ctx, rdb.B().Incr().Key(key).Build()).AsInt64()
		}
	}},
}

// TestDropReplies is the "did my command run?" case through each client library: an INCR whose
// reply is dropped times out on the client, yet ran; after Heal and Sever the client works
// again, on a connection in step (its first INCR returns the next value, not an old reply).
func TestDropReplies(t *testing.T) {
	addr := redistest.NewServer(t).Addr()
	rdb := direct(t, addr)
	for _, c := range incrClients {
		t.Run(c.name, func(t *testing.T) {
			n := newNet(t, netem.Conditions{})
			key := "netem:drop:" + c.name
			incr := c.dial(t, n, addr)
			if v, err := incr(key); err != nil || v != 1 {
				t.Fatalf("before the drop: INCR = %d, %v; want 1", v, err)
			}

			if err := n.DropReplies(addr); err != nil {
				t.Fatal(err)
			}
			if st := n.Stats(); len(st) != 1 || !st[0].DroppingReplies || st[0].Partitioned {
				t.Errorf("Stats = %+v, want %s dropping replies", st, addr)
			}
			if v, err := incr(key); !isTimeout(err) {
				t.Fatalf("dropping replies: INCR = %d, %v; want a timeout", v, err)
			}
			if v, err := rdb.Get(t.Context(), key).Int64(); err != nil || v != 2 {
				t.Fatalf("GET directly after the lost reply = %d, %v; want 2: the INCR ran", v, err)
			}

			if err := n.Heal(addr); err != nil {
				t.Fatal(err)
			}
			if err := n.Sever(addr); err != nil {
				t.Fatal(err)
			}
			// The client may try its old connection once more and find it closed; nothing sent
			// on it after Sever runs, so the first INCR that succeeds returns 3.
			var v int64
			err := errors.New("no INCR tried")
			for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); {
				v, err = incr(key)
			}
			if err != nil || v != 3 {
				t.Fatalf("after Heal and Sever: INCR = %d, %v; want 3", v, err)
			}
		})
	}
}

// TestHealClosesDroppedConnections checks that Heal closes the connections that lost replies,
// before they could read a reply out of step, and leaves the others working: the one open before
// that lost nothing, and the one made during the drop that sent nothing.
func TestHealClosesDroppedConnections(t *testing.T) {
	addr := redistest.NewServer(t).Addr()
	n := newNet(t, netem.Conditions{})
	lost := dialPinger(t, n, addr)
	kept := dialPinger(t, n, addr)
	for _, p := range []*pinger{lost, kept} {
		if reply, err := p.ping(5 * time.Second); err != nil || reply != "+PONG\r\n" {
			t.Fatalf("before the drop: %q, %v", reply, err)
		}
	}

	if err := n.DropReplies(addr); err != nil {
		t.Fatal(err)
	}
	if reply, err := lost.ping(silence); !isTimeout(err) {
		t.Fatalf("dropping replies, open connection: %q, %v; want a timeout", reply, err)
	}
	lostNew := dialPinger(t, n, addr)
	if reply, err := lostNew.ping(silence); !isTimeout(err) {
		t.Fatalf("dropping replies, new connection: %q, %v; want a timeout", reply, err)
	}
	quiet := dialPinger(t, n, addr) // sends nothing until after Heal

	if err := n.Heal(addr); err != nil {
		t.Fatal(err)
	}
	if st := n.Stats(); len(st) != 1 || st[0].DroppingReplies {
		t.Errorf("Stats after Heal = %+v, want no fault", st)
	}
	// Ask again on the connections that lost a reply: the PONG they would read is the reply to
	// the lost PING, which must not happen.
	lost.send(t, "PING")
	lostNew.send(t, "PING")
	wantClosed(t, "after Heal, connection that lost a reply", lost)
	wantClosed(t, "after Heal, new connection that lost a reply", lostNew)
	for name, p := range map[string]*pinger{"open before the drop": kept, "made during the drop": quiet} {
		if reply, err := p.ping(5 * time.Second); err != nil || reply != "+PONG\r\n" {
			t.Errorf("after Heal, connection %s that lost nothing: %q, %v", name, reply, err)
		}
	}
}

// TestStallReplies checks that a command sent while replies stall runs at once, and its reply
// arrives after Heal on the same connection, which stays in step.
func TestStallReplies(t *testing.T) {
	addr := redistest.NewServer(t).Addr()
	n := newNet(t, netem.Conditions{})
	rdb := direct(t, addr)
	p := dialPinger(t, n, addr)
	if reply, err := p.ping(5 * time.Second); err != nil || reply != "+PONG\r\n" {
		t.Fatalf("before the stall: %q, %v", reply, err)
	}

	if err := n.StallReplies(addr); err != nil {
		t.Fatal(err)
	}
	if st := n.Stats(); len(st) != 1 || !st[0].StallingReplies || st[0].DroppingReplies {
		t.Errorf("Stats = %+v, want %s stalling replies", st, addr)
	}
	p.send(t, "INCR netem:stall")
	if reply, err := p.read(silence); !isTimeout(err) {
		t.Fatalf("stalling replies: INCR = %q, %v; want a timeout", reply, err)
	}
	if v, err := rdb.Get(t.Context(), "netem:stall").Int64(); err != nil || v != 1 {
		t.Fatalf("GET directly while the reply stalls = %d, %v; want 1: the INCR ran", v, err)
	}

	if err := n.Heal(addr); err != nil {
		t.Fatal(err)
	}
	if reply, err := p.read(5 * time.Second); err != nil || reply != ":1\r\n" {
		t.Fatalf("after Heal, the stalled reply: %q, %v; want :1", reply, err)
	}
	p.send(t, "INCR netem:stall")
	if reply, err := p.read(5 * time.Second); err != nil || reply != ":2\r\n" {
		t.Fatalf("after Heal, the next INCR: %q, %v; want :2", reply, err)
	}
}

// TestSever checks that Sever closes the connections open through the proxy, whatever they were
// doing, and that connections made afterwards work.
func TestSever(t *testing.T) {
	addr := redistest.NewServer(t).Addr()
	n := newNet(t, netem.Conditions{Latency: 100 * time.Microsecond})
	if err := n.Sever(addr); err != nil {
		t.Fatalf("Sever before any connection: %v", err)
	}
	idle := dialPinger(t, n, addr)
	waiting := dialPinger(t, n, addr)
	for _, p := range []*pinger{idle, waiting} {
		if reply, err := p.ping(5 * time.Second); err != nil || reply != "+PONG\r\n" {
			t.Fatalf("before Sever: %q, %v", reply, err)
		}
	}
	waiting.send(t, "BLPOP netem:sever:empty 0") // blocks in Redis until its connection goes

	if err := n.Sever(addr); err != nil {
		t.Fatal(err)
	}
	wantClosed(t, "idle connection", idle)
	wantClosed(t, "connection waiting for a reply", waiting)
	after := dialPinger(t, n, addr)
	if reply, err := after.ping(5 * time.Second); err != nil || reply != "+PONG\r\n" {
		t.Fatalf("new connection after Sever: %q, %v", reply, err)
	}
	if st := n.Stats(); len(st) != 1 || st[0].Dials != 3 {
		t.Errorf("Stats = %+v, want 3 dials to %s", st, addr)
	}

	// A client library reconnects by itself.
	rdb := redis.NewClient(&redis.Options{Addr: addr, Dialer: n.Dial, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("go-redis PING before Sever: %v", err)
	}
	if err := n.Sever(addr); err != nil {
		t.Fatal(err)
	}
	err := errors.New("no PING tried")
	for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); {
		err = rdb.Ping(t.Context()).Err()
	}
	if err != nil {
		t.Fatalf("go-redis PING after Sever: %v", err)
	}
}

// TestSeverPartitioned checks that Sever closes connections whose bytes a partition holds, and
// that the held bytes are gone with them (the new connection's, made after, are not), and that
// nothing is left running (goleak in TestMain).
func TestSeverPartitioned(t *testing.T) {
	addr := redistest.NewServer(t).Addr()
	rdb := direct(t, addr)
	n := newNet(t, netem.Conditions{Latency: 100 * time.Microsecond})
	p := dialPinger(t, n, addr)
	if reply, err := p.ping(5 * time.Second); err != nil || reply != "+PONG\r\n" {
		t.Fatalf("before the partition: %q, %v", reply, err)
	}
	if err := n.Partition(addr); err != nil {
		t.Fatal(err)
	}
	p.send(t, "INCR netem:severed")
	if reply, err := p.read(silence); !isTimeout(err) {
		t.Fatalf("partitioned: %q, %v; want a timeout", reply, err)
	}

	if err := n.Sever(addr); err != nil {
		t.Fatal(err)
	}
	wantClosed(t, "partitioned connection", p)
	late := dialPinger(t, n, addr)
	if reply, err := late.ping(silence); !isTimeout(err) {
		t.Fatalf("still partitioned, new connection: %q, %v; want a timeout", reply, err)
	}
	if err := n.Heal(addr); err != nil {
		t.Fatal(err)
	}
	if reply, err := late.read(5 * time.Second); err != nil || reply != "+PONG\r\n" {
		t.Fatalf("after Heal, the new connection's held reply: %q, %v", reply, err)
	}
	if n, err := rdb.Exists(t.Context(), "netem:severed").Result(); err != nil || n != 0 {
		t.Errorf("EXISTS netem:severed = %d, %v: the INCR held on the severed connection ran", n, err)
	}
}

// TestFaultsCombine checks how faults on one address stack: a partition holds both directions
// whatever replies were doing, the reply faults replace each other, and Heal ends them all.
func TestFaultsCombine(t *testing.T) {
	addr := redistest.NewServer(t).Addr()
	n := newNet(t, netem.Conditions{})
	state := func() string {
		st := n.Stats()
		if len(st) != 1 {
			t.Fatalf("Stats = %+v, want one proxy", st)
		}
		return fmt.Sprintf("partitioned=%t dropping=%t stalling=%t", st[0].Partitioned, st[0].DroppingReplies, st[0].StallingReplies)
	}
	steps := []struct {
		do   func(string) error
		want string
	}{
		{n.StallReplies, "partitioned=false dropping=false stalling=true"},
		{n.DropReplies, "partitioned=false dropping=true stalling=false"},
		{n.Partition, "partitioned=true dropping=true stalling=false"},
		{n.Heal, "partitioned=false dropping=false stalling=false"},
		{n.Partition, "partitioned=true dropping=false stalling=false"},
		{n.DropReplies, "partitioned=true dropping=true stalling=false"},
	}
	for i, s := range steps {
		if err := s.do(addr); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := state(); got != s.want {
			t.Fatalf("after step %d: %s, want %s", i, got, s.want)
		}
	}

	// Partitioned and dropping replies: a PING waits (held, not dropped), and its reply comes
	// after Heal.
	p := dialPinger(t, n, addr)
	if reply, err := p.ping(silence); !isTimeout(err) {
		t.Fatalf("partitioned and dropping: %q, %v; want a timeout", reply, err)
	}
	if err := n.Heal(addr); err != nil {
		t.Fatal(err)
	}
	if reply, err := p.read(5 * time.Second); err != nil || reply != "+PONG\r\n" {
		t.Fatalf("after Heal, the held reply: %q, %v", reply, err)
	}
}

// TestPause checks that Pause holds replies for a while and delivers them after, and that its
// heal neither ends a later partition nor outlives Close.
func TestPause(t *testing.T) {
	addr := redistest.NewServer(t).Addr()
	t.Run("heals", func(t *testing.T) {
		n := newNet(t, netem.Conditions{})
		p := dialPinger(t, n, addr)
		if err := n.Pause(addr, time.Second); err != nil {
			t.Fatal(err)
		}
		if st := n.Stats(); !st[0].Partitioned {
			t.Errorf("Stats = %+v, want %s partitioned", st, addr)
		}
		if reply, err := p.ping(100 * time.Millisecond); !isTimeout(err) {
			t.Fatalf("paused: %q, %v; want a timeout", reply, err)
		}
		if reply, err := p.read(5 * time.Second); err != nil || reply != "+PONG\r\n" {
			t.Fatalf("after the pause, the held reply: %q, %v", reply, err)
		}
		if st := n.Stats(); st[0].Partitioned {
			t.Errorf("Stats = %+v after the pause, want %s healed", st, addr)
		}
		if err := n.Pause(addr, 0); err == nil {
			t.Error("Pause for 0: no error")
		}
	})
	t.Run("healed early", func(t *testing.T) {
		n := newNet(t, netem.Conditions{})
		if err := n.Pause(addr, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := n.Heal(addr); err != nil {
			t.Fatal(err)
		}
		if err := n.Partition(addr); err != nil {
			t.Fatal(err)
		}
		time.Sleep(400 * time.Millisecond) // past the pause's end
		if st := n.Stats(); !st[0].Partitioned {
			t.Errorf("Stats = %+v, want the later partition of %s in force", st, addr)
		}
	})
	t.Run("closed", func(t *testing.T) {
		n := netem.New(netem.Conditions{})
		if err := n.Pause(addr, time.Hour); err != nil {
			t.Fatal(err)
		}
		closed := make(chan error, 1)
		go func() { closed <- n.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close waited for an hour-long Pause")
		}
	})
}

// TestFaultsAfterClose checks that every fault refuses to act on a closed Net.
func TestFaultsAfterClose(t *testing.T) {
	addr := redistest.NewServer(t).Addr()
	n := netem.New(netem.Conditions{})
	dialPinger(t, n, addr)
	if err := n.DropReplies(addr); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(string) error{
		"DropReplies": n.DropReplies, "StallReplies": n.StallReplies, "Sever": n.Sever, "Heal": n.Heal,
		"Pause": func(a string) error { return n.Pause(a, time.Second) },
	} {
		if err := f(addr); !errors.Is(err, netem.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}
