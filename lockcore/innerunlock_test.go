package lockcore

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

// reentrant is one reentrant lock kind as the inner-unlock tests use it: take and release a
// hold as owner, and ask, as another client, for a hold that must exclude it.
type reentrant struct {
	kind    string
	lock    func(ctx context.Context, c *Client, name string, o Owner) error
	unlock  func(ctx context.Context, c *Client, name string, o Owner) error
	exclude func(ctx context.Context, c *Client, name string, o Owner, wait time.Duration) (bool, error)
	release func(ctx context.Context, c *Client, name string, o Owner) error // exclude's release
}

var reentrantKinds = []reentrant{
	{"mutex",
		func(ctx context.Context, c *Client, n string, o Owner) error { return c.Mutex(n).Lock(ctx, o) },
		func(ctx context.Context, c *Client, n string, o Owner) error { return c.Mutex(n).Unlock(ctx, o) },
		func(ctx context.Context, c *Client, n string, o Owner, w time.Duration) (bool, error) {
			return c.Mutex(n).TryLock(ctx, o, w, 0)
		},
		func(ctx context.Context, c *Client, n string, o Owner) error { return c.Mutex(n).Unlock(ctx, o) }},
	{"fair",
		func(ctx context.Context, c *Client, n string, o Owner) error {
			return c.FairMutex(n, FairMutexOptions{}).Lock(ctx, o)
		},
		func(ctx context.Context, c *Client, n string, o Owner) error {
			return c.FairMutex(n, FairMutexOptions{}).Unlock(ctx, o)
		},
		func(ctx context.Context, c *Client, n string, o Owner, w time.Duration) (bool, error) {
			return c.FairMutex(n, FairMutexOptions{}).TryLock(ctx, o, w, 0)
		},
		func(ctx context.Context, c *Client, n string, o Owner) error {
			return c.FairMutex(n, FairMutexOptions{}).Unlock(ctx, o)
		}},
	{"rwread",
		func(ctx context.Context, c *Client, n string, o Owner) error { return c.RWMutex(n).RLock(ctx, o) },
		func(ctx context.Context, c *Client, n string, o Owner) error { return c.RWMutex(n).RUnlock(ctx, o) },
		func(ctx context.Context, c *Client, n string, o Owner, w time.Duration) (bool, error) {
			return c.RWMutex(n).TryLock(ctx, o, w, 0)
		},
		func(ctx context.Context, c *Client, n string, o Owner) error { return c.RWMutex(n).Unlock(ctx, o) }},
	{"rwwrite",
		func(ctx context.Context, c *Client, n string, o Owner) error { return c.RWMutex(n).Lock(ctx, o) },
		func(ctx context.Context, c *Client, n string, o Owner) error { return c.RWMutex(n).Unlock(ctx, o) },
		func(ctx context.Context, c *Client, n string, o Owner, w time.Duration) (bool, error) {
			return c.RWMutex(n).TryLock(ctx, o, w, 0)
		},
		func(ctx context.Context, c *Client, n string, o Owner) error { return c.RWMutex(n).Unlock(ctx, o) }},
}

// Audit 2, finding 1. An owner holds a lock twice; the release of its inner hold fails, with no
// reply (the release ran, its reply was lost) or with an error reply (OOM under maxmemory 1: it
// did not run). The outer hold stands: it stays renewed, no other client gets the lock while it
// is held (the old code dropped the record, so the resolver deleted the field or the lease ran
// out unrenewed), and the outer Unlock releases it for good.
func TestFailedInnerUnlockKeepsOuterHold(t *testing.T) {
	const lease = 2 * time.Second
	for _, k := range reentrantKinds {
		for _, fault := range []string{"lostreply", "oom"} {
			t.Run(k.kind+"/"+fault, func(t *testing.T) {
				t.Parallel()
				srv := redistest.NewServer(t)
				e := newEnvFor(t, rueidis.ClientOption{InitAddress: []string{srv.Addr()}}, []string{srv.Addr()}, false)
				c, n := faultyClient(t, srv.Addr(), Options{LeaseTime: lease})
				other := e.client(t, Options{LeaseTime: lease})
				ctx := ctxT(t, 30*time.Second)
				name := "inner-" + k.kind
				a := c.NewOwner()
				// One whole cycle first, so that no script is loaded while replies are dropped
				// (an EVALSHA answered NOSCRIPT would not have run).
				if err := k.lock(ctx, c, name, a); err != nil {
					t.Fatal(err)
				}
				if err := k.unlock(ctx, c, name, a); err != nil {
					t.Fatal(err)
				}
				for range 2 {
					if err := k.lock(ctx, c, name, a); err != nil {
						t.Fatal(err)
					}
				}
				switch fault {
				case "lostreply":
					if err := n.DropReplies(srv.Addr()); err != nil {
						t.Fatal(err)
					}
					if err := k.unlock(ctx, c, name, a); err == nil {
						t.Fatal("inner unlock without a reply succeeded")
					}
					n.Heal(srv.Addr())
					n.Sever(srv.Addr())
				case "oom":
					e.do(t, "CONFIG", "SET", "maxmemory", "1")
					err := k.unlock(ctx, c, name, a)
					e.do(t, "CONFIG", "SET", "maxmemory", "0")
					if err == nil {
						t.Fatal("inner unlock under maxmemory 1 succeeded")
					}
					t.Logf("inner unlock: %v", err)
				}
				// Longer than the lease: a hold no longer renewed would be gone, and the
				// resolver, had it the field, would have deleted it long since.
				time.Sleep(lease + lease/2)
				o := other.NewOwner()
				if ok, err := k.exclude(ctx, other, name, o, 0); ok || err != nil {
					kv, _ := e.do(t, "HGETALL", name).AsStrMap()
					t.Fatalf("another client took the lock while its owner holds the outer hold: %v, %v; key %v; %+v", ok, err, kv, c.snapshot())
				}
				if err := k.unlock(ctx, c, name, a); err != nil {
					t.Fatalf("outer unlock: %v", err)
				}
				// A hold Redis still counts beyond the table's is cleared by the outer unlock
				// (a read hold's expires with its own lease).
				if ok, err := k.exclude(ctx, other, name, o, 2*lease); !ok || err != nil {
					kv, _ := e.do(t, "HGETALL", name).AsStrMap()
					t.Fatalf("another client after the outer unlock: %v, %v; key %v", ok, err, kv)
				}
				if err := k.release(ctx, other, name, o); err != nil {
					t.Fatal(err)
				}
				waitFor(t, func() bool { return len(e.keys(t)) == 0 })
			})
		}
	}
}
