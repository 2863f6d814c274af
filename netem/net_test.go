package netem_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/netem"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// rueidis' cluster client closes connections it dropped from its slot map 5 s after a
		// refresh, by design (see drivers' TestMain).
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2"))
}

// newNet returns a Net with c, closed when the test ends.
func newNet(t *testing.T, c netem.Conditions) *netem.Net {
	t.Helper()
	n := netem.New(c)
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return n
}

// pinger is a raw RESP connection through a Net, to time single round trips without a client
// library in between.
type pinger struct {
	c net.Conn
	r *bufio.Reader
}

func dialPinger(t *testing.T, n *netem.Net, addr string) *pinger {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, err := n.Dial(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &pinger{c: c, r: bufio.NewReader(c)}
}

// ping sends PING and waits up to wait for the reply.
func (p *pinger) ping(wait time.Duration) (string, error) {
	p.c.SetDeadline(time.Now().Add(wait))
	if _, err := p.c.Write([]byte("PING\r\n")); err != nil {
		return "", err
	}
	return p.r.ReadString('\n')
}

// TestLatency checks that a round trip through a Net with latency L takes at least 2L (a lower
// bound: the delay is there; how much more the machine adds is not this test's business).
func TestLatency(t *testing.T) {
	addr := redistest.NewServer(t).Addr()
	for _, c := range []netem.Conditions{
		{Latency: time.Millisecond},
		{Latency: 2 * time.Millisecond, Jitter: time.Millisecond},
	} {
		t.Run(c.String(), func(t *testing.T) {
			n := newNet(t, c)
			p := dialPinger(t, n, addr)
			floor := 2 * (c.Latency - c.Jitter)
			for i := range 5 {
				start := time.Now()
				reply, err := p.ping(5 * time.Second)
				took := time.Since(start)
				if err != nil || reply != "+PONG\r\n" {
					t.Fatalf("ping %d: %q, %v", i, reply, err)
				}
				if took < floor {
					t.Errorf("ping %d took %v, less than the %v the conditions add", i, took, floor)
				}
			}
			st := n.Stats()
			if len(st) != 1 || st[0].Upstream != addr || st[0].Dials != 1 || st[0].Listen == addr {
				t.Errorf("Stats = %+v, want one proxy in front of %s with 1 dial", st, addr)
			}
		})
	}
}

// TestPartition checks that a partition silences open and new connections without closing them,
// keeps what was sent (it arrives after Heal), and that Heal restores service.
func TestPartition(t *testing.T) {
	addr := redistest.NewServer(t).Addr()
	n := newNet(t, netem.Conditions{})
	p := dialPinger(t, n, addr)
	if reply, err := p.ping(5 * time.Second); err != nil || reply != "+PONG\r\n" {
		t.Fatalf("before the partition: %q, %v", reply, err)
	}

	if err := n.Partition(addr); err != nil {
		t.Fatal(err)
	}
	if err := n.Partition(addr); err != nil {
		t.Fatalf("second Partition: %v", err)
	}
	var ne net.Error
	if reply, err := p.ping(300 * time.Millisecond); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("partitioned, open connection: %q, %v; want a timeout", reply, err)
	}
	late := dialPinger(t, n, addr) // connects (to the proxy), then hears nothing
	if reply, err := late.ping(300 * time.Millisecond); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("partitioned, new connection: %q, %v; want a timeout", reply, err)
	}
	if st := n.Stats(); len(st) != 1 || !st[0].Partitioned {
		t.Errorf("Stats = %+v, want %s partitioned", st, addr)
	}

	// A client library sees a timeout too.
	rdb := redis.NewClient(&redis.Options{Addr: addr, Dialer: n.Dial, ReadTimeout: 300 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(t.Context()).Err(); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("partitioned, go-redis PING: %v; want a timeout", err)
	}

	if err := n.Heal(addr); err != nil {
		t.Fatal(err)
	}
	// The PINGs sent during the partition were held, not dropped: their replies arrive now.
	p.c.SetDeadline(time.Now().Add(5 * time.Second))
	if reply, err := p.r.ReadString('\n'); err != nil || reply != "+PONG\r\n" {
		t.Fatalf("after Heal, the held reply: %q, %v", reply, err)
	}
	late.c.SetDeadline(time.Now().Add(5 * time.Second))
	if reply, err := late.r.ReadString('\n'); err != nil || reply != "+PONG\r\n" {
		t.Fatalf("after Heal, the new connection's held reply: %q, %v", reply, err)
	}
	if reply, err := p.ping(5 * time.Second); err != nil || reply != "+PONG\r\n" {
		t.Fatalf("after Heal: %q, %v", reply, err)
	}
	if err := rdb.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("after Heal, go-redis PING: %v", err)
	}
	if err := n.Heal(addr); err != nil {
		t.Fatalf("second Heal: %v", err)
	}
}

// TestCloseWhilePartitioned checks that Close stops a partitioned proxy and everything it started
// (goleak in TestMain fails the package otherwise), and that the Net refuses work afterwards.
func TestCloseWhilePartitioned(t *testing.T) {
	addr := redistest.NewServer(t).Addr()
	n := netem.New(netem.Conditions{Latency: time.Millisecond})
	p := dialPinger(t, n, addr)
	if err := n.Partition(addr); err != nil {
		t.Fatal(err)
	}
	p.ping(50 * time.Millisecond) // bytes waiting in the stalled link
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := n.Dial(t.Context(), "tcp", addr); !errors.Is(err, netem.ErrClosed) {
		t.Errorf("Dial after Close: %v, want ErrClosed", err)
	}
	if err := n.Partition(addr); !errors.Is(err, netem.ErrClosed) {
		t.Errorf("Partition after Close: %v, want ErrClosed", err)
	}
	if _, err := n.Dial(t.Context(), "unix", "/tmp/x.sock"); err == nil {
		t.Error("Dial unix: no error")
	}
}

// clientsOf are the two client libraries lockbench's drivers use, each connected through n to
// the deployment at addrs (sentinels when master is set). Both take the dialer for every
// connection they make: the seeds, and what they discover.
var clients = []struct {
	name string
	use  func(t *testing.T, n *netem.Net, addrs []string, master string) // SET and GET keys over all slots
}{
	{"go-redis", func(t *testing.T, n *netem.Net, addrs []string, master string) {
		rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: addrs, MasterName: master, Dialer: n.Dial, IsClusterMode: master == ""})
		defer rdb.Close()
		for i := range 50 {
			k := fmt.Sprintf("netem:%d", i)
			if err := rdb.Set(t.Context(), k, i, time.Minute).Err(); err != nil {
				t.Fatalf("SET %s: %v", k, err)
			}
		}
	}},
	{"rueidis", func(t *testing.T, n *netem.Net, addrs []string, master string) {
		rdb, err := rueidis.NewClient(rueidis.ClientOption{
			InitAddress: addrs, Sentinel: rueidis.SentinelOption{MasterSet: master}, DisableCache: true,
			DialCtxFn: func(ctx context.Context, addr string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
				return n.Dial(ctx, "tcp", addr)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		for i := range 50 {
			k := fmt.Sprintf("netem:%d", i)
			if err := rdb.Do(t.Context(), rdb.B().Set().Key(k).Value("1").Ex(time.Minute).Build()).Error(); err != nil {
				t.Fatalf("SET %s: %v", k, err)
			}
		}
	}},
}

// proxied returns the upstream addresses of n's proxies that were dialed.
func proxied(n *netem.Net) []string {
	var out []string
	for _, s := range n.Stats() {
		if s.Dials > 0 {
			out = append(out, s.Upstream)
		}
	}
	return out
}

// TestClusterDiscoveredNodes gives each client one seed node of a cluster: the connections to the
// other masters, found in CLUSTER SLOTS, go through proxies too.
func TestClusterDiscoveredNodes(t *testing.T) {
	cl := redistest.NewCluster(t)
	seed := cl.Masters()[0]
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			n := newNet(t, netem.Conditions{Latency: 100 * time.Microsecond})
			c.use(t, n, []string{seed}, "")
			got := proxied(n)
			for _, m := range cl.Masters() {
				if !slices.Contains(got, m) {
					t.Errorf("master %s was not dialed through the Net; proxied: %v", m, got)
				}
			}
		})
	}
}

// TestSentinelDiscoveredMaster checks that the connections to the master the sentinels name go
// through a proxy, and those to the sentinels too.
func TestSentinelDiscoveredMaster(t *testing.T) {
	s := redistest.NewSentinel(t)
	master, err := s.MasterAddr(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			n := newNet(t, netem.Conditions{Latency: 100 * time.Microsecond})
			c.use(t, n, s.Addrs(), s.MasterName())
			got := proxied(n)
			if !slices.Contains(got, master) {
				t.Errorf("master %s was not dialed through the Net; proxied: %v", master, got)
			}
			sentinels := 0
			for _, a := range s.Addrs() {
				if slices.Contains(got, a) {
					sentinels++
				}
			}
			if sentinels == 0 {
				t.Errorf("no sentinel %v was dialed through the Net; proxied: %v", s.Addrs(), got)
			}
		})
	}
}
