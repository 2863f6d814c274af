package lockcore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/lockhooks"
)

// hammer runs workers goroutines of c, each taking and releasing the Mutex name rounds times
// (hold: sleep inside), and returns the number of overlapping holds seen.
func hammer(t *testing.T, c *Client, name string, workers, rounds int, hold time.Duration) int64 {
	t.Helper()
	ctx := ctxT(t, 60*time.Second)
	var inside atomic.Int32
	var violations atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := c.NewOwner()
			m := c.Mutex(name)
			for range rounds {
				if err := m.Lock(ctx, o); err != nil {
					t.Error(err)
					return
				}
				if inside.Add(1) != 1 {
					violations.Add(1)
				}
				if hold > 0 {
					time.Sleep(hold)
				}
				inside.Add(-1)
				if err := m.Unlock(ctx, o); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return violations.Load()
}

// grants is how many times Redis granted a lock to c: attempts that succeeded, and releases
// that passed the lock on inside the release script.
func grants(s lockhooks.Stats) int64 { return s.Attempts - s.FailedAttempts + s.Passes }

// On a hot lock the goroutines of one Client pass it among themselves: most grants need no
// Redis call, the bound on consecutive hand-overs holds, and the lock stays exclusive.
func TestHandoffOnHotLock(t *testing.T) {
	e := newEnv(t)
	const limit = 8
	c := e.client(t, Options{HandoffLimit: limit, HandoffWindow: 5 * time.Second})
	const workers, rounds = 16, 200
	before := e.calls(t, "evalsha")
	if v := hammer(t, c, "hot", workers, rounds, 0); v != 0 {
		t.Fatalf("%d violations", v)
	}
	scripts := e.calls(t, "evalsha") - before
	s := c.snapshot()
	t.Logf("%d acquisitions: %+v, %d script calls", workers*rounds, s, scripts)
	if s.Handoffs == 0 {
		t.Fatal("no hand-overs on a lock 16 goroutines share")
	}
	if max := limit * grants(s); s.Handoffs > max {
		t.Fatalf("%d hand-overs for %d grants through Redis: more than %d in a row", s.Handoffs, grants(s), limit)
	}
	if got := s.Handoffs + grants(s); got != workers*rounds {
		t.Fatalf("hand-overs + grants = %d, want the %d acquisitions", got, workers*rounds)
	}
	// Each grant through Redis costs at most its attempt and its release; hand-overs cost none.
	if scripts >= workers*rounds {
		t.Fatalf("%d script calls for %d acquisitions: hand-overs are not saving round trips", scripts, workers*rounds)
	}
	if n := c.localQueueLen("hot"); n != 0 || c.cohorts() != 0 {
		t.Fatalf("local queue state left: %d waiters, %d cohorts", n, c.cohorts())
	}
	e.assertNoKeys(t)
}

// In strict mode every release goes through Redis, but a waiter is served by the release's own
// script call while nobody else waits: one script call per acquisition, no failed attempts.
func TestStrictModePassesThroughRedis(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{HandoffLimit: -1})
	const workers, rounds = 16, 100
	before := e.calls(t, "evalsha")
	if v := hammer(t, c, "strict", workers, rounds, 0); v != 0 {
		t.Fatalf("%d violations", v)
	}
	scripts := e.calls(t, "evalsha") - before
	s := c.snapshot()
	t.Logf("%d acquisitions: %+v, %d script calls", workers*rounds, s, scripts)
	if s.Handoffs != 0 {
		t.Fatalf("%d hand-overs in strict mode", s.Handoffs)
	}
	if s.Passes == 0 {
		t.Fatal("no release passed the lock to a local waiter")
	}
	if grants(s) != workers*rounds {
		t.Fatalf("%d grants through Redis for %d acquisitions", grants(s), workers*rounds)
	}
	// Every acquisition is an attempt or a pass, plus its release: at most 2 calls each, and
	// well under that when releases pass.
	if scripts > 2*workers*rounds {
		t.Fatalf("%d script calls for %d acquisitions", scripts, workers*rounds)
	}
	e.assertNoKeys(t)
}

// A handed-over lock keeps the field this Client wrote in Redis; its new local owner reenters
// and unlocks through it, and the previous owner can no longer unlock.
func TestHandedOverLockKeepsFieldAndOwnership(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{HandoffWindow: 5 * time.Second})
	ctx := ctxT(t, 10*time.Second)
	m := c.Mutex("field")
	a, b := c.NewOwner(), c.NewOwner()
	if err := m.Lock(ctx, a); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- m.Lock(ctx, b) }()
	waitFor(t, func() bool { return c.localQueueLen("field") == 1 })
	if err := m.Unlock(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if s := c.snapshot(); s.Handoffs != 1 {
		t.Fatalf("stats %+v, want one hand-over", s)
	}
	fields, err := e.do(t, "HGETALL", "field").AsStrMap()
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) != 1 || fields[a.Field()] == "" {
		t.Fatalf("lock hash %v, want a's field %s kept", fields, a.Field())
	}
	if !strings.HasPrefix(a.Field(), c.ID()+":") {
		t.Fatalf("field %s is not this client's", a.Field())
	}
	if n, ok := m.HeldBy(b); !ok || n != 1 {
		t.Fatalf("HeldBy(b) = %d, %v", n, ok)
	}
	if err := m.Unlock(ctx, a); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("unlock by the previous owner = %v, want ErrNotOwner", err)
	}
	// Reentry by the new owner counts up the kept field.
	if err := m.Lock(ctx, b); err != nil {
		t.Fatal(err)
	}
	if n := e.int(t, "HGET", "field", a.Field()); n != 2 {
		t.Fatalf("count %d after reentry, want 2", n)
	}
	if err := m.Unlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	if n := e.int(t, "HGET", "field", a.Field()); n != 1 {
		t.Fatalf("count %d after a partial unlock, want 1", n)
	}
	if err := m.Unlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx, b); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("unlock beyond the holds = %v, want ErrNotOwner", err)
	}
	e.assertNoKeys(t)
}

// A lock is handed over only while its lease is safely ahead.
func TestHandoffNeedsLeaseAhead(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{HandoffWindow: 5 * time.Second})
	ctx := ctxT(t, 10*time.Second)
	for _, tc := range []struct {
		name         string
		holder, next time.Duration // explicit leases; 0: watchdog
		renewFailed  bool          // the holder's last renewal failed
		handed       bool
	}{
		{name: "watchdog", handed: true},
		{name: "watchdog renewal failed", renewFailed: true},
		{name: "explicit same lease", holder: 5 * time.Second, next: 5 * time.Second},
		{name: "explicit shorter lease", holder: 5 * time.Second, next: time.Second, handed: true},
		{name: "explicit to watchdog", holder: 5 * time.Second},
		{name: "watchdog to explicit", next: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "lease-" + strings.ReplaceAll(tc.name, " ", "-")
			m := c.Mutex(name)
			a, b := c.NewOwner(), c.NewOwner()
			lock := func(o Owner, lease time.Duration) error {
				if lease > 0 {
					return m.LockLease(ctx, o, lease)
				}
				return m.Lock(ctx, o)
			}
			if err := lock(a, tc.holder); err != nil {
				t.Fatal(err)
			}
			if tc.renewFailed {
				// Renewals sent since the grant got no reply: less than half the lease is
				// confirmed ahead, whatever was sent (safety_test.go does it for real).
				s := c.holds.shard(name)
				s.mu.Lock()
				s.m[name].expires = c.now() + int64(DefaultLeaseTime)/2 - int64(time.Second)
				s.mu.Unlock()
			}
			got := make(chan error, 1)
			go func() { got <- lock(b, tc.next) }()
			waitFor(t, func() bool { return c.localQueueLen(name) == 1 })
			before := c.snapshot()
			if err := m.Unlock(ctx, a); err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatal(err)
			}
			after := c.snapshot()
			if handed := after.Handoffs > before.Handoffs; handed != tc.handed {
				t.Fatalf("handed over %v, want %v (stats %+v)", handed, tc.handed, after)
			}
			if !tc.handed && after.Passes+after.Attempts == before.Passes+before.Attempts {
				t.Fatal("not handed over, and not granted through Redis either")
			}
			if err := m.Unlock(ctx, b); err != nil {
				t.Fatal(err)
			}
		})
	}
	e.assertNoKeys(t)
}

// Waiters that give up leave the local queue; the holder's release then finds nobody and the
// Client forgets the lock; TryLock without a wait does not queue.
func TestQueuedWaitersGiveUp(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	m := c.Mutex("giveup")
	a := c.NewOwner()
	if err := m.Lock(ctx, a); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.TryLock(ctx, c.NewOwner(), 0, 0); ok || err != nil {
		t.Fatalf("TryLock without wait on a locally held lock = %v, %v", ok, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := c.NewOwner()
			if i%2 == 0 {
				wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
				errs <- m.Lock(wctx, o)
				return
			}
			ok, err := m.TryLock(ctx, o, 100*time.Millisecond, 0)
			if ok {
				err = errors.New("TryLock got a lock that was held throughout")
			} else if err == nil {
				err = context.DeadlineExceeded // ran out of wait, as it should
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("waiter ended with %v, want a deadline", err)
		}
	}
	if n := c.localQueueLen("giveup"); n != 0 {
		t.Fatalf("%d waiters left in the queue", n)
	}
	if err := m.Unlock(ctx, a); err != nil {
		t.Fatal(err)
	}
	if n := c.cohorts(); n != 0 {
		t.Fatalf("%d cohorts left after the last release", n)
	}
	// The next acquisition goes straight to Redis.
	if ok, err := m.TryLock(ctx, c.NewOwner(), 0, time.Second); !ok || err != nil {
		t.Fatalf("TryLock after the release = %v, %v", ok, err)
	}
	e.do(t, "DEL", "giveup")
}

// Close ends the waits of queued goroutines: nobody waits forever.
func TestCloseWithQueuedWaiters(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	m := c.Mutex("closing")
	if err := m.LockLease(ctx, c.NewOwner(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- m.Lock(ctx, c.NewOwner()) }()
	}
	waitFor(t, func() bool { return c.localQueueLen("closing") == 4 })
	c.Close()
	for range 4 {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Errorf("queued waiter ended with %v, want ErrClosed", err)
		}
	}
	e.do(t, "DEL", "closing")
}

// A local holder that lets its explicit lease run out without unlocking (Redisson allows it)
// does not block the local queue: a waiter takes the lock once the lease is over.
func TestQueueMovesOnWhenLeaseRunsOut(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	m := c.Mutex("expire")
	a := c.NewOwner()
	if err := m.LockLease(ctx, a, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	b := c.NewOwner()
	start := time.Now()
	if err := m.Lock(ctx, b); err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	t.Logf("waited %v for a 300ms lease to run out", waited)
	if waited < 250*time.Millisecond {
		t.Fatalf("granted after %v, while the 300ms lease was live", waited)
	}
	if err := m.Unlock(ctx, a); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("unlock by the expired holder = %v, want ErrNotOwner", err)
	}
	if n, ok := m.HeldBy(b); !ok || n != 1 {
		t.Fatalf("the expired holder's unlock disturbed the new holder: HeldBy = %d, %v", n, ok)
	}
	if err := m.Unlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}

// A watchdog hold found gone (an operator deleted the lock) lets the local queue move on, and
// the old holder's late unlock fails without disturbing the new holder.
func TestQueueMovesOnWhenHoldIsLost(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{LeaseTime: 300 * time.Millisecond, RenewInterval: 100 * time.Millisecond})
	ctx := ctxT(t, 10*time.Second)
	m := c.Mutex("lost")
	a := c.NewOwner()
	if err := m.Lock(ctx, a); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	b := c.NewOwner()
	go func() { got <- m.Lock(ctx, b) }()
	waitFor(t, func() bool { return c.localQueueLen("lost") == 1 })
	e.do(t, "DEL", "lost")
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the local waiter still waits 5s after the lock was deleted")
	}
	if err := m.Unlock(ctx, a); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("unlock by the holder that lost the lock = %v, want ErrNotOwner", err)
	}
	if err := m.Unlock(ctx, b); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}

// A client on another process (here another Client with no queue, waiting as Redisson does:
// one subscription, an attempt per release message) gets a lock that a hot Client's goroutines
// keep passing among themselves: the bounds make the hot Client release through Redis, and the
// release message makes its next local waiter hold back.
func TestRemoteWaiterGetsHotLock(t *testing.T) {
	e := newEnv(t)
	hot := e.client(t, Options{})
	remote := e.client(t, Options{knobs: lockhooks.Knobs{NoLocalQueue: true}})
	ctx := ctxT(t, 60*time.Second)
	stop, hotGrants := hotLock(t, ctx, hot, "contended", 8)
	defer stop()
	o := remote.NewOwner()
	m := remote.Mutex("contended")
	var waits []time.Duration
	for range 20 {
		start := time.Now()
		if err := m.Lock(ctx, o); err != nil {
			t.Fatal(err)
		}
		waits = append(waits, time.Since(start))
		if err := m.Unlock(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	var worst, total time.Duration
	for _, w := range waits {
		worst = max(worst, w)
		total += w
	}
	s := hot.snapshot()
	t.Logf("remote waits: mean %v, worst %v (window %v, yield %v); hot client %d grants, %+v",
		total/time.Duration(len(waits)), worst, DefaultHandoffWindow, DefaultHandoffYield, hotGrants.Load(), s)
	if s.Yields == 0 {
		t.Fatal("the hot client never left the lock free for the remote waiter")
	}
	// Not a performance figure: the bound that would starve the remote waiter is the 60 s
	// context; a second is hundreds of hand-over windows.
	if worst > time.Second {
		t.Fatalf("remote waiter waited %v for a lock the hot client releases every %v", worst, DefaultHandoffWindow)
	}
	e.assertNoKeys(t)
}
