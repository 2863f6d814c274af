package lockcore

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

// nodeErrors returns every NodeError in err's tree (errors.As stops at the first), by node.
func nodeErrors(err error) map[string]*NodeError {
	found := map[string]*NodeError{}
	var walk func(error)
	walk = func(err error) {
		if ne, ok := err.(*NodeError); ok {
			found[ne.Node] = ne
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			if next := u.Unwrap(); next != nil {
				walk(next)
			}
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return found
}

func keysOf(m map[string]*NodeError) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// One master down and one refusing (WRONGTYPE at the lock's key) leave no quorum of three: the
// error names both, and only them, by address; the refusing one is behind a password, which the
// error never shows.
func TestRedLockErrorNamesDownAndRefusingMasters(t *testing.T) {
	const password = "n0t-in-errors"
	guarded := redistest.NewServer(t, "--requirepass", password)
	down, up := redistest.NewServer(t), redistest.NewServer(t)
	var clients []*Client
	for _, s := range []struct {
		addr, password string
	}{{guarded.Addr(), password}, {down.Addr(), ""}, {up.Addr(), ""}} {
		c, err := New(Options{Redis: rueidis.ClientOption{InitAddress: []string{s.addr}, Password: s.password}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		clients = append(clients, c)
	}
	ctx := ctxT(t, 20*time.Second)
	const name = "node:red"
	// A string where the lock's hash should be: the lock script fails with WRONGTYPE.
	g := clients[0].Redis()
	if err := g.Do(ctx, g.B().Set().Key(name).Value("not a lock").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := down.Kill(); err != nil {
		t.Fatal(err)
	}
	rl := NewRedLock(clients, name, RedLockOptions{})
	ok, err := rl.TryLock(ctx, rl.NewOwner(), 0, 5*time.Second)
	if ok || !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("TryLock with one master down and one refusing = %v, %v; want false, ErrNoQuorum", ok, err)
	}
	var first *NodeError
	if !errors.As(err, &first) {
		t.Fatalf("errors.As(%v, *NodeError) = false", err)
	}
	nodes := nodeErrors(err)
	if got, want := keysOf(nodes), []string{guarded.Addr(), down.Addr()}; !slices.Equal(got, want) && !slices.Equal(got, []string{want[1], want[0]}) {
		t.Fatalf("NodeErrors name %v, want the refusing %s and the down %s (not the live %s); error: %v",
			got, guarded.Addr(), down.Addr(), up.Addr(), err)
	}
	var redisErr *rueidis.RedisError
	if ne := nodes[guarded.Addr()]; !errors.As(ne, &redisErr) || !strings.Contains(redisErr.Error(), "WRONGTYPE") {
		t.Errorf("refusing master's error = %v, want its WRONGTYPE reply", ne)
	}
	if ne := nodes[down.Addr()]; errors.As(ne, &redisErr) {
		t.Errorf("down master's error = %v, want a connection error, not a Redis reply", ne)
	}
	if strings.Contains(err.Error(), password) {
		t.Fatalf("error shows the password: %v", err)
	}
}

// A stalled master is named with ErrNodeTimeout, by attempts and by Unlock.
func TestRedLockErrorNamesStalledMasters(t *testing.T) {
	r := newRedEnv(t, 3)
	ctx := ctxT(t, 20*time.Second)
	rl := NewRedLock(r.clients, "node:stall", RedLockOptions{NodeTimeout: 200 * time.Millisecond})
	owner := rl.NewOwner()
	// Connect to every master first, so the stall hits a request, not a dial; and hold the lock,
	// so that Unlock has something to release.
	if ok, err := rl.TryLock(ctx, owner, 0, 10*time.Second); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	stalled := []string{r.addrs[0], r.addrs[2]}
	for _, addr := range stalled {
		pid := r.masters.Pid(addr)
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		})
	}
	slices.Sort(stalled)
	check := func(what string, err error) {
		t.Helper()
		nodes := nodeErrors(err)
		if got := keysOf(nodes); !slices.Equal(got, stalled) {
			t.Fatalf("%s: NodeErrors name %v, want the stalled %v; error: %v", what, got, stalled, err)
		}
		for _, ne := range nodes {
			if !errors.Is(ne, ErrNodeTimeout) {
				t.Errorf("%s: %v, want ErrNodeTimeout", what, ne)
			}
		}
	}
	err := rl.Unlock(ctx, owner)
	if err == nil {
		t.Fatal("Unlock with two of three masters stalled succeeded")
	}
	check("Unlock", err)
	ok, err := rl.TryLock(ctx, rl.NewOwner(), 0, 5*time.Second)
	if ok || !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("TryLock with two of three stalled = %v, %v; want false, ErrNoQuorum", ok, err)
	}
	check("TryLock", err)
}

// A MultiLock over two deployments names the one whose part failed, and errors.Is still finds
// the cause: ErrNotOwner from an Unlock by a non-holder, a connection error from a dead server.
func TestMultiLockErrorNamesNode(t *testing.T) {
	a, b := redistest.NewServer(t), redistest.NewServer(t)
	// b's Client is given its rueidis client, so its name comes from the nodes that client knows.
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{b.Addr()}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rdb.Close)
	var clients []*Client
	for _, opt := range []Options{{Redis: rueidis.ClientOption{InitAddress: []string{a.Addr()}}}, {Client: rdb}} {
		c, err := New(opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		clients = append(clients, c)
	}
	ctx := ctxT(t, 20*time.Second)
	ml := NewMultiLock([]Locker{clients[0].Mutex("node:m1"), clients[1].Mutex("node:m2")}, MultiLockOptions{})
	owner := clients[0].NewOwner()
	if ok, err := ml.TryLock(ctx, owner, 0, 0); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	// Release m2 behind the MultiLock's back: its Unlock then finds m2 not held, on b.
	if err := clients[1].Mutex("node:m2").Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	err = ml.Unlock(ctx, owner)
	if !errors.Is(err, ErrNotOwner) {
		t.Fatalf("Unlock with m2 released = %v, want ErrNotOwner", err)
	}
	var ne *NodeError
	if !errors.As(err, &ne) || ne.Node != b.Addr() || !errors.Is(ne, ErrNotOwner) {
		t.Fatalf("Unlock's NodeError = %v, want %s: ErrNotOwner", ne, b.Addr())
	}
	if got := keysOf(nodeErrors(err)); !slices.Equal(got, []string{b.Addr()}) {
		t.Fatalf("NodeErrors name %v, want only %s", got, b.Addr())
	}

	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	ok, err := ml.TryLock(ctx, owner, 0, 0)
	if ok || err == nil {
		t.Fatalf("TryLock with %s down = %v, %v; want an error", b.Addr(), ok, err)
	}
	if !errors.As(err, &ne) || ne.Node != b.Addr() {
		t.Fatalf("TryLock's error %v names %v, want %s", err, ne, b.Addr())
	}
	// The failed round released what it took on a.
	if n, err := clients[0].Redis().Do(ctx, clients[0].Redis().B().Exists().Key("node:m1").Build()).AsInt64(); err != nil || n != 0 {
		t.Fatalf("node:m1 left after the failed round: exists=%d, %v", n, err)
	}
}

// Addresses written as URLs lose everything but host and port: credentials never reach an error.
func TestHostPort(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"127.0.0.1:6379", "127.0.0.1:6379"},
		{"[::1]:6379", "[::1]:6379"},
		{"redis://user:secret@10.0.0.1:6380/0", "10.0.0.1:6380"},
		{"rediss://:secret@cache.example:6380?dial_timeout=1s", "cache.example:6380"},
		{"user:p@ss@host:1", "host:1"},
	} {
		if got := hostPort(tc.in); got != tc.want {
			t.Errorf("hostPort(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
