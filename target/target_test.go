package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/clock"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// lines collects a Target's progress lines; safe for concurrent use.
type lines struct {
	mu sync.Mutex
	l  []string
}

func (l *lines) log(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.l = append(l.l, fmt.Sprintf(format, a...))
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.l, "\n")
}

// openNative opens a native single like Open's zero Spec, skipping (or, in CI, failing) when
// redis-server is not on PATH, and closes it when the test ends.
func openNative(t *testing.T, s Spec) *Target {
	t.Helper()
	tg, err := Open(t.Context(), s)
	if errors.Is(err, compose.ErrRedisServerNotFound) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (CI must install redis-server: scripts/install-deps.sh)", err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// client is a plain connection to addr for the test's own commands.
func client(t *testing.T, addr string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// answers reports whether a TCP connection to addr is accepted.
func answers(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// The zero Spec starts one native redis-server: Open describes it, reads its statistics and
// version, flushes it as Clean (it is lockbench's), measures its clock, and Close stops it.
func TestOpenNativeSingle(t *testing.T) {
	t.Parallel()
	var log lines
	var started compose.Topology
	tg := openNative(t, Spec{Log: log.log, OnStart: func(topo compose.Topology) { started = topo }})
	if started == nil || started != tg.Topology() {
		t.Errorf("OnStart got %v; want the started topology %v", started, tg.Topology())
	}
	if tg.Provider() != ProviderNative || tg.Attached() || tg.Conn() != nil || tg.Secure() != nil || tg.Net() != nil {
		t.Errorf("provider %q, attached %v, conn %v, secure %v, net %v; want a plain native start", tg.Provider(), tg.Attached(), tg.Conn(), tg.Secure(), tg.Net())
	}
	nodes := tg.Nodes()
	if len(nodes) != 1 || nodes[0].Role != compose.RoleMaster || len(tg.Masters()) != 1 {
		t.Fatalf("nodes %+v; want one master", nodes)
	}
	addr := nodes[0].Addr
	if !strings.Contains(log.String(), "redis-server pid ") || !strings.Contains(log.String(), " on "+addr+" (master)") {
		t.Errorf("progress lacks the server's pid line:\n%s", log.String())
	}
	info := tg.Info()
	if info.Kind != compose.KindSingle || info.Provider != ProviderNative || len(info.Nodes) != 1 || info.Nodes[0].Addr != addr || info.Connection != nil {
		t.Errorf("Info %+v", info)
	}
	if cfg := tg.DriverConfig(7 * time.Second); cfg.Topology != compose.KindSingle || len(cfg.Addrs) != 1 || cfg.Addrs[0] != addr || cfg.Lease != 7*time.Second || cfg.Dialer != nil {
		t.Errorf("DriverConfig %+v", cfg)
	}
	if v := tg.RedisVersion(t.Context()); v == "" || strings.Count(v, ".") != 2 {
		t.Errorf("RedisVersion %q; want x.y.z", v)
	}

	ctx := t.Context()
	c := client(t, addr)
	for _, k := range []string{"bench:0", "someone:else"} {
		if err := c.Do(ctx, c.B().Set().Key(k).Value("v").Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	stats, err := tg.ServerStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 || stats[0].Addr != addr || stats[0].Commands["set"].Calls < 2 || stats[0].ConnectionsReceived < 2 {
		t.Errorf("ServerStats %+v; want this node's two SETs and our connections", stats)
	}
	// Lockbench started it: Clean flushes everything, whatever the prefix.
	if _, err := tg.Clean(ctx, "bench:", nil); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Do(ctx, c.B().Dbsize().Build()).AsInt64(); err != nil || n != 0 {
		t.Errorf("DBSIZE after Clean of a started server: %d, %v; want 0", n, err)
	}

	est, source, err := tg.MeasureClock(ctx, clock.Options{Samples: 3})
	if err != nil || source != addr || est.RTT <= 0 {
		t.Errorf("MeasureClock: %+v from %q, %v; want a round trip to %s", est, source, err, addr)
	}

	if err := tg.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if answers(addr) {
		t.Errorf("%s still answers after Close: the server lockbench started must stop", addr)
	}
	if err := tg.Close(); err != nil {
		t.Errorf("second Close: %v; want nothing done", err)
	}
}

// attach opens the single server at addr with settings of opt (Addrs and Topology filled).
func attach(t *testing.T, addr string, opt conn.Options) (*Target, error) {
	t.Helper()
	if opt.Topology == "" {
		opt.Topology = compose.KindSingle
	}
	opt.Addrs = []string{addr}
	s, err := conn.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return Open(t.Context(), Spec{Topology: compose.Spec{Kind: opt.Topology}, Attach: s})
}

// On a deployment Open attached to, Clean deletes only the keys of lockbench's shapes for its
// prefix, counts them by shape, and leaves every other key alone, even one that contains the
// prefix; Close leaves the server running.
func TestCleanAttachedDeletesOnlyOwnKeys(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	tg, err := attach(t, srv.Addr(), conn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if !tg.Attached() || tg.Provider() != ProviderAttached || tg.Info().Connection == nil {
		t.Fatalf("provider %q, connection %v; want attached, with the connection recorded", tg.Provider(), tg.Info().Connection)
	}
	ctx := t.Context()
	c := client(t, srv.Addr())
	own := []string{"lbt:bench:0", "lbt:bench:12", "redisson_lock_queue:{lbt:bench:3}", "rueidislock:2:lbt:bench:4"}
	foreign := []string{"lbt:bench:", "lbt:bench:0:data", "lbt:bench:x", "app:lbt:bench:0", "redisson_lock_queue:{other:0}", "lbt:benchmark"}
	for _, k := range append(append([]string{}, own...), foreign...) {
		if err := c.Do(ctx, c.B().Set().Key(k).Value("v").Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	rec := &results.Cleanup{Prefix: "lbt:bench:"}
	n, err := tg.Clean(ctx, "lbt:bench:", rec)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(own)) || rec.Removed != n || rec.ByPattern["lbt:bench:<n>"] != 2 || rec.ByPattern["redisson_lock_queue:{lbt:bench:<n>}"] != 1 {
		t.Errorf("Clean deleted %d, recorded %+v; want %d: two locks, one fair queue, one rueidislock key", n, rec, len(own))
	}
	for _, k := range own {
		if e, _ := c.Do(ctx, c.B().Exists().Key(k).Build()).AsInt64(); e != 0 {
			t.Errorf("lockbench's key %q survived Clean", k)
		}
	}
	for _, k := range foreign {
		if v, err := c.Do(ctx, c.B().Get().Key(k).Build()).ToString(); err != nil || v != "v" {
			t.Errorf("someone else's key %q: %q, %v after Clean; want it untouched", k, v, err)
		}
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
		t.Errorf("the attached server after Close: %v; want it still running", err)
	}
}

// Attaching where nothing listens fails as a deployment that does not answer, not as bad input;
// attaching to something that is not Redis, or to a single server as a cluster, is bad input
// (ErrBadSpec) with the cause's own text and sentinel.
func TestOpenAttachBadAddress(t *testing.T) {
	t.Parallel()
	t.Run("nothing listens", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		tg, err := attach(t, addr, conn.Options{})
		if err == nil {
			tg.Close()
			t.Fatalf("attach to %s, where nothing listens: no error", addr)
		}
		if errors.Is(err, ErrBadSpec) || !errors.Is(err, compose.ErrUnreachable) {
			t.Errorf("attach to %s: %v; want compose.ErrUnreachable, not ErrBadSpec", addr, err)
		}
	})
	t.Run("not redis", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
				c.Close()
			}
		}()
		tg, err := attach(t, l.Addr().String(), conn.Options{})
		if err == nil {
			tg.Close()
			t.Fatal("attach to an HTTP server: no error")
		}
		if !errors.Is(err, ErrBadSpec) || !conn.Refused(err) || strings.HasPrefix(err.Error(), ErrBadSpec.Error()) {
			t.Errorf("attach to an HTTP server: %v; want ErrBadSpec and conn.Refused, with the cause's text", err)
		}
	})
	t.Run("topology mismatch", func(t *testing.T) {
		t.Parallel()
		srv := redistest.NewServer(t)
		tg, err := attach(t, srv.Addr(), conn.Options{Topology: compose.KindCluster})
		if err == nil {
			tg.Close()
			t.Fatal("attach to a single server as a cluster: no error")
		}
		if !errors.Is(err, ErrBadSpec) || !errors.Is(err, compose.ErrTopologyMismatch) || strings.HasPrefix(err.Error(), ErrBadSpec.Error()) {
			t.Errorf("attach to a single server as a cluster: %v; want ErrBadSpec and compose.ErrTopologyMismatch, with the cause's text", err)
		}
	})
}

// A Spec that contradicts itself is refused before anything starts.
func TestOpenRefusesBadSpec(t *testing.T) {
	t.Parallel()
	attached, err := conn.New(conn.Options{Addrs: []string{"127.0.0.1:1"}, Topology: compose.KindSingle})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]Spec{
		"unknown provider":   {Provider: "kubernetes"},
		"attach with auth":   {Attach: attached, Auth: true},
		"attach with image":  {Attach: attached, Image: "redis:7"},
		"native auth given":  {Native: compose.NativeOptions{Auth: &compose.NativeAuth{User: "u", Password: "p"}}},
		"attach with docker": {Attach: attached, Provider: ProviderDocker},
	} {
		var started bool
		s.OnStart = func(compose.Topology) { started = true }
		tg, err := Open(context.Background(), s)
		if tg != nil || !errors.Is(err, ErrBadSpec) || started {
			t.Errorf("%s: Open = %v, %v, started %v; want ErrBadSpec before anything starts", name, tg, err, started)
		}
	}
}

// An error of OnConnected closes what Open started and is Open's error.
func TestOpenOnConnectedError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	var addr string
	tg, err := Open(t.Context(), Spec{
		OnStart:     func(topo compose.Topology) { addr = topo.Addrs()[0] },
		OnConnected: func() error { return boom },
	})
	if errors.Is(err, compose.ErrRedisServerNotFound) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if tg != nil || !errors.Is(err, boom) || errors.Is(err, ErrBadSpec) {
		t.Fatalf("Open = %v, %v; want OnConnected's error", tg, err)
	}
	if addr == "" || answers(addr) {
		t.Errorf("server %q after a failed Open: want it started, then stopped", addr)
	}
}
