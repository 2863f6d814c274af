package lockcore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

func TestMutualExclusion64Goroutines(t *testing.T) { testMutualExclusion64Goroutines(t, newEnv(t)) }

// On one server the suite runs in every queue mode (the per-case tests run the default).
func TestSemanticsOnSingle(t *testing.T) {
	t.Parallel() // its own server: it overlaps the other long ones
	runSemantics(t, newEnv(t))
}

func testMutualExclusion64Goroutines(t *testing.T, e *testEnv) {
	c := e.client(t, Options{})
	const workers, rounds, keys = 64, 200, 4
	var occupancy [keys]atomic.Int32
	var violations, acquired atomic.Int64
	// A guard against a hang, not a speed test: alone this takes 6 s, and 55 s beside six CPU
	// hogs and two more copies of it (2026-11-28, with no waits ended by the TTL: no wake-up
	// lost); a CI machine that slow ran out of 60 s.
	ctx := ctxT(t, 3*time.Minute)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := c.NewOwner()
			for i := range rounds {
				k := (w + i) % keys
				m := c.Mutex(fmt.Sprintf("mx:%d", k))
				if err := m.Lock(ctx, owner); err != nil {
					errs <- err
					return
				}
				if occupancy[k].Add(1) != 1 {
					violations.Add(1)
				}
				acquired.Add(1)
				occupancy[k].Add(-1)
				if err := m.Unlock(ctx, owner); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		// How far it got and how the waits ended tell a slow machine from lost wake-ups.
		t.Fatalf("%v (%d of %d acquired; %+v)", err, acquired.Load(), workers*rounds, c.snapshot())
	}
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d mutual exclusion violations", v)
	}
	t.Logf("%+v", c.snapshot())
	if got := acquired.Load(); got != workers*rounds {
		t.Fatalf("acquired %d, want %d", got, workers*rounds)
	}
	e.assertNoKeys(t)
}

func TestReentrancyCounts(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testReentrancyCounts(t, newEnv(t))
}

func testReentrancyCounts(t *testing.T, e *testEnv) {
	c := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	owner := c.NewOwner()
	m := c.Mutex("re")
	for i := 1; i <= 3; i++ {
		if err := m.Lock(ctx, owner); err != nil {
			t.Fatal(err)
		}
		if got := e.int(t, "HGET", "re", owner.Field()); got != int64(i) {
			t.Fatalf("after %d locks the hold count is %d", i, got)
		}
	}
	if n, ok := m.HeldBy(owner); !ok || n != 3 {
		t.Fatalf("HeldBy = %d, %v; want 3, true", n, ok)
	}
	// Another owner cannot take it while the count is above zero.
	if ok, err := m.TryLock(ctx, c.NewOwner(), 0, 0); err != nil || ok {
		t.Fatalf("second owner TryLock = %v, %v; want false", ok, err)
	}
	for i := 2; i >= 0; i-- {
		if err := m.Unlock(ctx, owner); err != nil {
			t.Fatal(err)
		}
		exists := e.int(t, "EXISTS", "re")
		if i == 0 {
			if exists != 0 {
				t.Fatal("key still exists after the last unlock")
			}
			break
		}
		if got := e.int(t, "HGET", "re", owner.Field()); got != int64(i) {
			t.Fatalf("hold count %d, want %d", got, i)
		}
		if pttl := e.int(t, "PTTL", "re"); pttl <= 0 {
			t.Fatalf("partial unlock left PTTL %d; the lease must be kept", pttl)
		}
	}
	if err := m.Unlock(ctx, owner); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("unlock past zero = %v, want ErrNotOwner", err)
	}
	e.assertNoKeys(t)
}

func TestRedissonKeyLayoutAndChannel(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{ID: "5f0b7c3e-0000-4000-8000-000000000001"})
	ctx := ctxT(t, 10*time.Second)
	owner := c.OwnerWithID(1)
	if owner.Field() != "5f0b7c3e-0000-4000-8000-000000000001:1" {
		t.Fatalf("field %q is not <client id>:<thread id>", owner.Field())
	}
	m := c.Mutex("orders")
	if err := m.Lock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	typ, _ := e.do(t, "TYPE", "orders").ToString()
	if typ != "hash" {
		t.Fatalf("lock key type %q, want hash", typ)
	}
	if pttl := e.int(t, "PTTL", "orders"); pttl <= 20000 || pttl > 30000 {
		t.Fatalf("PTTL %d, want the 30 s default lease", pttl)
	}
	// A plain subscriber (a Redisson client) sees "0" on redisson_lock__channel:{orders}.
	got := make(chan string, 1)
	subscribed := make(chan struct{})
	rctx, cancel := context.WithCancel(context.Background())
	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		hook := rueidis.WithOnSubscriptionHook(rctx, func(s rueidis.PubSubSubscription) {
			if s.Kind == "subscribe" {
				close(subscribed)
			}
		})
		e.rdb.Receive(hook, e.rdb.B().Subscribe().Channel("redisson_lock__channel:{orders}").Build(), func(msg rueidis.PubSubMessage) {
			select {
			case got <- msg.Message:
			default:
			}
		})
	}()
	defer func() { cancel(); <-recvDone }()
	select {
	case <-subscribed:
	case <-ctx.Done():
		t.Fatal("subscription not confirmed")
	}
	if err := m.Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	select {
	case msg := <-got:
		if msg != "0" {
			t.Fatalf("unlock message %q, want \"0\"", msg)
		}
	case <-ctx.Done():
		t.Fatal("no unlock message")
	}
	if name := channelName("{orders}:x"); name != "redisson_lock__channel:{orders}:x" {
		t.Fatalf("channel for a hash-tagged name: %q", name)
	}
}

func TestUnlockByNonOwner(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testUnlockByNonOwner(t, newEnv(t))
}

func testUnlockByNonOwner(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	owner := a.NewOwner()
	if err := a.Mutex("nu").Lock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		m     *Mutex
		owner Owner
	}{
		{"other owner of the same client", a.Mutex("nu"), a.NewOwner()},
		{"owner of another client", b.Mutex("nu"), b.NewOwner()},
		{"another client using the same owner id", b.Mutex("nu"), b.OwnerWithID(1)},
	}
	for _, tc := range cases {
		if err := tc.m.Unlock(ctx, tc.owner); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s: Unlock = %v, want ErrNotOwner", tc.name, err)
		}
	}
	if err := a.Mutex("nu").Unlock(ctx, Owner{}); !errors.Is(err, ErrNoOwner) {
		t.Errorf("zero owner: Unlock = %v, want ErrNoOwner", err)
	}
	if e.int(t, "EXISTS", "nu") != 1 {
		t.Fatal("a non-owner unlock released the lock")
	}
	// The release script decrements first and repairs a non-owner's: no field of theirs may
	// remain, the holder's count and lease stay, and a free lock is not created.
	if n, pttl := e.int(t, "HLEN", "nu"), e.int(t, "PTTL", "nu"); n != 1 || pttl <= 0 {
		t.Errorf("after non-owner unlocks: %d fields, PTTL %d; want the holder's 1 field and its lease", n, pttl)
	}
	if err := a.Mutex("free").Unlock(ctx, a.NewOwner()); !errors.Is(err, ErrNotOwner) {
		t.Errorf("Unlock of a free lock = %v, want ErrNotOwner", err)
	}
	if e.int(t, "EXISTS", "free") != 0 {
		t.Error("unlocking a free lock created its key")
	}
	if err := a.Mutex("nu").Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}

func TestLeaseExpiryFreesLock(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testLeaseExpiryFreesLock(t, newEnv(t))
}

func testLeaseExpiryFreesLock(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	ao := a.NewOwner()
	if err := a.Mutex("lease").LockLease(ctx, ao, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	bo := b.NewOwner()
	if ok, _ := b.Mutex("lease").TryLock(ctx, bo, 0, 0); ok {
		t.Fatal("taken while the lease was live")
	}
	// No renewal for an explicit lease: the lock frees itself and b gets it while waiting.
	ok, err := b.Mutex("lease").TryLock(ctx, bo, 5*time.Second, time.Second)
	if err != nil || !ok {
		t.Fatalf("TryLock after the lease = %v, %v", ok, err)
	}
	if a.renewalCount() != 0 {
		t.Fatalf("%d renewals of an explicit lease", a.renewalCount())
	}
	if err := a.Mutex("lease").Unlock(ctx, ao); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("unlock after the lease ran out = %v, want ErrNotOwner", err)
	}
	if err := b.Mutex("lease").Unlock(ctx, bo); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}

func TestWatchdogRenewsWhileHeldAndStopsAfterUnlock(t *testing.T) {
	testWatchdogRenewsWhileHeldAndStopsAfterUnlock(t, newEnv(t))
}

func testWatchdogRenewsWhileHeldAndStopsAfterUnlock(t *testing.T, e *testEnv) {
	// A lease of 2 s renewed every 250 ms: a renewal may be 1.75 s late before the lease ends,
	// and a watchdog that does not renew still loses the lock within the 3.2 s held. With
	// 300/100 ms a loaded CI machine (lockcore's suites 4 at a time beside cmd's) once let the
	// lease lapse, and with 1 s/250 ms once more on the Docker cluster (2026-11-28, a fresh-clone
	// CI with other tests run beside it): stalls of the machine, likely, not of the watchdog,
	// whose renewals the count below checks.
	a := e.client(t, Options{LeaseTime: 2 * time.Second, RenewInterval: 250 * time.Millisecond})
	b := e.client(t, Options{})
	ctx := ctxT(t, 15*time.Second)
	ao := a.NewOwner()
	m := a.Mutex("wd")
	if err := m.Lock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3200 * time.Millisecond) // over a lease and a half
	if ok, _ := b.Mutex("wd").TryLock(ctx, b.NewOwner(), 0, 0); ok {
		// Whether the watchdog tried: renewals that failed (unanswered within half an
		// interval: a stalled machine) or found the lock gone, against those that renewed.
		t.Fatalf("lock lost while held: %d renewals answered, %d found the lock gone, %d failed and retried",
			a.renewalCount(), a.stats.renewGone.Load(), a.stats.renewFailed.Load())
	}
	if pttl := e.int(t, "PTTL", "wd"); pttl <= 0 {
		t.Fatalf("PTTL %d while held", pttl)
	}
	if a.renewalCount() < 3 {
		t.Fatalf("%d renewals in 3.2 s at one per 250 ms", a.renewalCount())
	}
	if err := m.Unlock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	assertRenewalsStop(t, a, 250*time.Millisecond)
	e.assertNoKeys(t)
}

func TestWatchdogStopsWhenLockIsGone(t *testing.T) {
	e := newEnv(t)
	a := e.client(t, Options{LeaseTime: 300 * time.Millisecond, RenewInterval: 100 * time.Millisecond})
	ctx := ctxT(t, 10*time.Second)
	ao := a.NewOwner()
	m := a.Mutex("gone")
	if err := m.Lock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	e.do(t, "DEL", "gone") // an operator deletes the lock
	deadline := time.Now().Add(2 * time.Second)
	for a.holds.len() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the watchdog still tracks a lock that is gone")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e.int(t, "EXISTS", "gone") != 0 {
		t.Fatal("a renewal recreated the lock")
	}
	if err := m.Unlock(ctx, ao); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("unlock of a lost lock = %v, want ErrNotOwner", err)
	}
}

func TestWaiterWokenByPubSubBeforeTTL(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testWaiterWokenByPubSubBeforeTTL(t, newEnv(t))
}

func testWaiterWokenByPubSubBeforeTTL(t *testing.T, e *testEnv) {
	a := e.client(t, Options{}) // 30 s lease: only the unlock message can wake the waiter in time
	b := e.client(t, Options{})
	ctx := ctxT(t, 20*time.Second)
	ao := a.NewOwner()
	if err := a.Mutex("wake").Lock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	bo := b.NewOwner()
	go func() {
		if err := b.Mutex("wake").Lock(ctx, bo); err != nil {
			t.Error(err)
		}
		got <- time.Now()
	}()
	waitFor(t, func() bool { return e.numsub(t, "redisson_lock__channel:{wake}") == 1 })
	released := time.Now()
	if err := a.Mutex("wake").Unlock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-got:
		// The TTL was ~30 s; anything near it means the waiter slept through the message.
		if d := at.Sub(released); d > 5*time.Second {
			t.Fatalf("waiter took %v after the release; the unlock message was missed", d)
		}
	case <-ctx.Done():
		t.Fatal("waiter never woke")
	}
	if err := b.Mutex("wake").Unlock(ctx, bo); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return e.numsub(t, "redisson_lock__channel:{wake}") == 0 })
	e.assertNoKeys(t)
}

func TestWaitersShareOneSubscriptionAndWakeOneByOne(t *testing.T) {
	testWaitersShareOneSubscriptionAndWakeOneByOne(t, newEnv(t))
}

func testWaitersShareOneSubscriptionAndWakeOneByOne(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 30*time.Second)
	ao := a.NewOwner()
	if err := a.Mutex("herd").Lock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	const waiters = 16
	var wg sync.WaitGroup
	var holders, violations atomic.Int32
	for range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := b.NewOwner()
			m := b.Mutex("herd")
			if err := m.Lock(ctx, o); err != nil {
				t.Error(err)
				return
			}
			if holders.Add(1) != 1 {
				violations.Add(1)
			}
			time.Sleep(time.Millisecond)
			holders.Add(-1)
			if err := m.Unlock(ctx, o); err != nil {
				t.Error(err)
			}
		}()
	}
	// Without the local queue every waiter waits on the shared subscription; with it one waits
	// there (the one attempt in flight) and the others in the local queue, which holds the
	// subscription too while anyone is queued (a second ref, see outside.go).
	inRedis, local := waiters, 0
	if !b.opt.knobs.NoLocalQueue {
		inRedis, local = 2, waiters-1
	}
	waitFor(t, func() bool {
		b.waiters.mu.Lock()
		q := b.waiters.queues["redisson_lock__channel:{herd}"]
		// refs counts a waiter from the moment it joins; the server counts the subscription
		// only once its SUBSCRIBE is confirmed, which a loaded machine can delay.
		subscribed := q != nil && q.refs == inRedis && isClosed(q.ready)
		b.waiters.mu.Unlock()
		return subscribed && b.localQueueLen("herd") == local
	})
	if n := e.numsub(t, "redisson_lock__channel:{herd}"); n != 1 {
		t.Fatalf("%d subscriptions for %d local waiters, want 1", n, waiters)
	}
	before := e.calls(t, "evalsha")
	if err := a.Mutex("herd").Unlock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d violations", v)
	}
	// Each release wakes one waiter: about one lock attempt and one unlock per waiter, not a
	// retry by every waiter per release (that would be ~waiters²).
	scripts := e.calls(t, "evalsha") - before
	if scripts > 4*waiters {
		t.Fatalf("%d script calls for %d waiters: waiters are woken in herds", scripts, waiters)
	}
	waitFor(t, func() bool { return e.numsub(t, "redisson_lock__channel:{herd}") == 0 })
	e.assertNoKeys(t)
}

func TestNoScriptAfterScriptFlushRecovers(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	o := c.NewOwner()
	m := c.Mutex("flush")
	cycle := func() {
		t.Helper()
		if err := m.Lock(ctx, o); err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		cycle()
	}
	// The body goes out once per script (answering the first NOSCRIPT), never again.
	if n := e.calls(t, "eval"); n != 2 {
		t.Fatalf("%d EVAL calls for 100 cycles, want 2 (one per script)", n)
	}
	if n := e.calls(t, "evalsha"); n != 200 {
		t.Fatalf("%d EVALSHA calls for 100 cycles, want 200", n)
	}
	e.do(t, "SCRIPT", "FLUSH")
	for range 10 {
		cycle()
	}
	if n := e.calls(t, "eval"); n != 4 {
		t.Fatalf("%d EVAL calls after SCRIPT FLUSH, want 4", n)
	}
	e.assertNoKeys(t)
}

func TestTryLockWaitTimesOut(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	holder := c.NewOwner()
	m := c.Mutex("busy")
	if err := m.Lock(ctx, holder); err != nil {
		t.Fatal(err)
	}
	ok, err := m.TryLock(ctx, c.NewOwner(), 200*time.Millisecond, 0)
	if err != nil || ok {
		t.Fatalf("TryLock on a held lock = %v, %v; want false, nil", ok, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := m.Lock(cctx, c.NewOwner()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock with an expiring context = %v", err)
	}
	if _, err := m.TryLock(ctx, holder, -time.Second, 0); err == nil {
		t.Fatal("negative wait accepted")
	}
	if err := m.Unlock(ctx, holder); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return e.numsub(t, "redisson_lock__channel:{busy}") == 0 })
	e.assertNoKeys(t)
}

func TestClosedClient(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	c.Close()
	if err := c.Mutex("x").Lock(context.Background(), c.NewOwner()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Lock on a closed client = %v", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	for _, o := range []Options{
		{LeaseTime: time.Microsecond},
		{LeaseTime: time.Second, RenewInterval: 2 * time.Second},
		{RenewInterval: -time.Second},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// waitFor polls cond for up to 5 s; it is for state that settles asynchronously.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestExpiredExplicitLeaseIsForgotten: holds of explicit leases left to expire leave the
// client's table. The leases are 1 s, not 100 ms: a loaded CI machine took longer than 100 ms to
// take the ten, and the first had already been forgotten when they were counted.
func TestExpiredExplicitLeaseIsForgotten(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{LeaseTime: 300 * time.Millisecond, RenewInterval: 100 * time.Millisecond})
	ctx := ctxT(t, 10*time.Second)
	for i := range 10 {
		if err := c.Mutex(fmt.Sprintf("left:%d", i)).LockLease(ctx, c.NewOwner(), time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.holds.len(); n != 10 {
		t.Fatalf("%d holds recorded, want 10", n)
	}
	// Locks left to expire must not pile up in the client's table.
	waitFor(t, func() bool { return c.holds.len() == 0 })
	if c.renewalCount() != 0 {
		t.Fatalf("%d renewals of explicit leases", c.renewalCount())
	}
	e.assertNoKeys(t)
}

// TestPartialUnlockKeepsExplicitLeaseHoldTracked: a partial unlock sets the explicit lease again
// in Redis, and the client keeps the hold it still counts. The lease is 1.5 s with sleeps of 1 s,
// half a second of slack each way: with 300 ms and 200 ms a loaded CI machine let the first
// lease run out before the partial unlock.
func TestPartialUnlockKeepsExplicitLeaseHoldTracked(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{LeaseTime: 300 * time.Millisecond, RenewInterval: 100 * time.Millisecond})
	ctx := ctxT(t, 10*time.Second)
	o := c.NewOwner()
	m := c.Mutex("partial")
	const lease = 1500 * time.Millisecond
	for range 2 {
		if err := m.LockLease(ctx, o, lease); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(lease * 2 / 3)
	if err := m.Unlock(ctx, o); err != nil { // count 2 → 1; the lease starts again in Redis
		t.Fatal(err)
	}
	time.Sleep(lease * 2 / 3) // past the first lease, inside the renewed one
	if e.int(t, "EXISTS", "partial") != 1 {
		t.Fatal("lock gone inside the lease set by the partial unlock")
	}
	if n, ok := m.HeldBy(o); !ok || n != 1 {
		t.Fatalf("HeldBy = %d, %v: the client forgot a hold Redis still has", n, ok)
	}
	if err := m.Unlock(ctx, o); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}
