package lockcore

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

// Audit 2, finding 6 (TestChaos: a fenced lock of one client entered while another client's read
// hold was inside its window). A read lock of the read-write lock writes the owner's own field
// into the lock hash, the field the owner's Mutex, FencedMutex and FairMutex attempts send. A read
// grant whose reply was lost leaves that field in the hash, counted by nobody; the owner's next
// attempt through another lock kind found its field there and was granted as a re-entry, while
// other readers held the lock. The lock scripts of the Redisson hash now never re-enter a hash of
// the read-write lock (one with "mode").
func TestLostReadGrantIsNotReentry(t *testing.T) {
	for _, kind := range []string{"fenced", "mutex", "fair"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := redistest.NewServer(t)
			e := newEnvFor(t, rueidis.ClientOption{InitAddress: []string{srv.Addr()}}, []string{srv.Addr()}, false)
			c, n := faultyClient(t, srv.Addr(), Options{LeaseTime: time.Second})
			reader := e.client(t, Options{LeaseTime: time.Second})
			ctx := ctxT(t, 20*time.Second)
			name := "crossread-" + kind
			m := c.NewOwner()
			// Load the scripts first: an EVALSHA answered NOSCRIPT while replies are dropped
			// would not run.
			if err := c.RWMutex("warm").RLock(ctx, m); err != nil {
				t.Fatal(err)
			}
			if err := c.RWMutex("warm").RUnlock(ctx, m); err != nil {
				t.Fatal(err)
			}
			r := reader.NewOwner()
			if err := reader.RWMutex(name).RLock(ctx, r); err != nil {
				t.Fatal(err)
			}
			if err := n.DropReplies(srv.Addr()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.RWMutex(name).TryRLock(ctx, m, 0, 0); err == nil {
				t.Fatal("read lock without a reply succeeded")
			}
			n.Heal(srv.Addr())
			n.Sever(srv.Addr())
			if e.int(t, "HEXISTS", name, m.Field()) != 1 {
				t.Fatal("the read grant did not run: the test's fault is not the one meant")
			}
			var ok bool
			var err error
			switch kind {
			case "fenced":
				_, ok, err = c.FencedMutex(name).TryLock(ctx, m, 0, 0)
			case "mutex":
				ok, err = c.Mutex(name).TryLock(ctx, m, 0, 0)
			case "fair":
				ok, err = c.FairMutex(name, FairMutexOptions{}).TryLock(ctx, m, 0, 0)
			}
			if ok || err != nil {
				kv, _ := e.do(t, "HGETALL", name).AsStrMap()
				t.Fatalf("%s lock granted on a read-locked name that another client's reader holds: %v, %v; key %v", kind, ok, err, kv)
			}
			if err := reader.RWMutex(name).RUnlock(ctx, r); err != nil {
				t.Fatal(err)
			}
			// The lost read grant expires with its lease.
			waitFor(t, func() bool {
				for _, k := range e.keys(t) {
					if k != "redisson_lock_token:{"+name+"}" {
						return false
					}
				}
				return true
			})
			e.do(t, "DEL", "redisson_lock_token:{"+name+"}")
			e.assertNoKeys(t)
		})
	}
}

// Finding 6, the resolver's side: a Mutex attempt whose reply is lost puts its field in doubt,
// and the resolver deletes that field from the lock hash. When the name is held as a read-write
// lock, that field is the same owner's read hold: deleting it let the last other reader's
// release delete the lock while the owner still held its read hold, and a writer of another
// client in. The resolver leaves a read-write lock's hash alone (no Mutex grant is ever made in
// one).
func TestDoubtLeavesReadHoldAlone(t *testing.T) {
	srv := redistest.NewServer(t)
	e := newEnvFor(t, rueidis.ClientOption{InitAddress: []string{srv.Addr()}}, []string{srv.Addr()}, false)
	c, n := faultyClient(t, srv.Addr(), Options{LeaseTime: 2 * time.Second})
	other := e.client(t, Options{LeaseTime: 2 * time.Second})
	ctx := ctxT(t, 20*time.Second)
	name := "doubtread"
	a, b := c.NewOwner(), other.NewOwner()
	if err := c.RWMutex(name).RLock(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := other.RWMutex(name).RLock(ctx, b); err != nil {
		t.Fatal(err)
	}
	// Load the lock script: this attempt finds the name read-locked and fails.
	if ok, err := c.Mutex(name).TryLock(ctx, a, 0, 0); ok || err != nil {
		t.Fatalf("a Mutex on a read-locked name: %v, %v", ok, err)
	}
	if err := n.DropReplies(srv.Addr()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mutex(name).TryLock(ctx, a, 0, 0); err == nil {
		t.Fatal("attempt without a reply succeeded")
	}
	n.Heal(srv.Addr())
	n.Sever(srv.Addr())
	waitFor(t, func() bool { s := c.snapshot(); return s.Doubts > 0 && s.Resolved == s.Doubts })
	if err := other.RWMutex(name).RUnlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	w := other.NewOwner()
	if ok, err := other.RWMutex(name).TryLock(ctx, w, 0, 0); ok || err != nil {
		kv, _ := e.do(t, "HGETALL", name).AsStrMap()
		t.Fatalf("another client's writer got the lock while a still holds its read hold: %v, %v; key %v", ok, err, kv)
	}
	if err := c.RWMutex(name).RUnlock(ctx, a); err != nil {
		t.Fatalf("a's read unlock: %v", err)
	}
	if ok, err := other.RWMutex(name).TryLock(ctx, w, 0, 0); !ok || err != nil {
		t.Fatalf("a writer after the last reader left: %v, %v", ok, err)
	}
	if err := other.RWMutex(name).Unlock(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(e.keys(t)) == 0 })
}

// Finding 6, the batched lock operation: a Mutex attempt that goes out in a batch script (two
// or more operations gathered) must refuse a read-write lock's hash holding its owner's read field
// as the single lock script does.
func TestBatchLockNeverReentersReadHash(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	name := "batchread"
	m := c.NewOwner()
	if err := c.RWMutex(name).RLock(ctx, m); err != nil {
		t.Fatal(err)
	}
	res := batchScript.exec(ctx, c.rdb, []string{name, "batchread-other"},
		batchArgs(false, c.publishCmd, "l", "30000", m.Field(), "l", "30000", m.Field()))
	vals, err := res.ToArray()
	if err != nil || len(vals) != 2 {
		t.Fatalf("batch: %v, %v", vals, err)
	}
	if _, err := vals[0].AsInt64(); err != nil {
		kv, _ := e.do(t, "HGETALL", name).AsStrMap()
		t.Fatalf("the batched lock operation re-entered a read-locked hash through its owner's read field: %v; key %v", err, kv)
	}
	if _, err := vals[1].AsInt64(); !rueidis.IsRedisNil(err) {
		t.Fatalf("the batch's other operation, on a free lock: %v, want granted", err)
	}
	e.do(t, "DEL", "batchread-other")
	if err := c.RWMutex(name).RUnlock(ctx, m); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}
