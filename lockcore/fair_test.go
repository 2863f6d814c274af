package lockcore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/netem"
)

// fairKeys returns the queue and timeouts keys of a fair lock named name without a hash tag.
func fairKeys(name string) (queue, timeouts string) {
	return "redisson_lock_queue:{" + name + "}", "redisson_lock_timeout:{" + name + "}"
}

// queued returns a fair lock's queue, first waiter first.
func queued(t testing.TB, e *testEnv, queue string) []string {
	t.Helper()
	got, err := e.do(t, "LRANGE", queue, "0", "-1").AsStrSlice()
	if err != nil {
		t.Fatalf("LRANGE %s: %v", queue, err)
	}
	return got
}

// enqueueByHand puts a waiter that never retries (a process that died while queued) at the
// tail of a fair lock's queue, due at deadline.
func enqueueByHand(t testing.TB, e *testEnv, name, field string, deadline time.Time) {
	t.Helper()
	queue, timeouts := fairKeys(name)
	e.int(t, "ZADD", timeouts, strconv.FormatInt(deadline.UnixMilli(), 10), field)
	e.int(t, "RPUSH", queue, field)
}

// fairListen subscribes a plain client to channels, as a Redisson client does, and returns the
// messages received; the subscription ends with the test.
func fairListen(t *testing.T, e *testEnv, channels ...string) <-chan rueidis.PubSubMessage {
	t.Helper()
	msgs := make(chan rueidis.PubSubMessage, 16)
	kind, cmd := "subscribe", e.rdb.B().Subscribe().Channel(channels...).Build()
	if e.sharded {
		kind, cmd = "ssubscribe", e.rdb.B().Ssubscribe().Channel(channels...).Build()
	}
	ctx, cancel := context.WithCancel(context.Background())
	subscribed := make(chan struct{})
	var confirmed atomic.Int32
	hook := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
		if s.Kind == kind && int(confirmed.Add(1)) == len(channels) {
			close(subscribed)
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.rdb.Receive(hook, cmd, func(m rueidis.PubSubMessage) {
			select {
			case msgs <- m:
			default:
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-subscribed:
	case <-time.After(5 * time.Second):
		t.Fatal("subscription not confirmed")
	}
	return msgs
}

func TestFairFIFO32Waiters(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testFairFIFO32Waiters(t, newEnv(t))
}

// testFairFIFO32Waiters queues 32 waiters from four clients one at a time, so their order is
// known, and checks that the lock goes to them in exactly that order.
func testFairFIFO32Waiters(t *testing.T, e *testEnv) {
	clients := []*Client{e.client(t, Options{}), e.client(t, Options{}), e.client(t, Options{}), e.client(t, Options{})}
	ctx := ctxT(t, 60*time.Second)
	const name, waiters = "fair:fifo", 32
	queue, timeouts := fairKeys(name)
	holder := clients[0].NewOwner()
	if err := clients[0].FairMutex(name, FairMutexOptions{}).Lock(ctx, holder); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var holders, violations atomic.Int32
	var wg sync.WaitGroup
	fields := make([]string, waiters)
	for i := range waiters {
		c := clients[i%len(clients)]
		o := c.NewOwner()
		fields[i] = o.Field()
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := c.FairMutex(name, FairMutexOptions{})
			if err := m.Lock(ctx, o); err != nil {
				t.Error(err)
				return
			}
			if holders.Add(1) != 1 {
				violations.Add(1)
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			holders.Add(-1)
			if err := m.Unlock(ctx, o); err != nil {
				t.Error(err)
			}
		}()
		waitFor(t, func() bool { return e.int(t, "LLEN", queue) == int64(i+1) })
	}
	if got := queued(t, e, queue); !slices.Equal(got, fields) {
		t.Fatalf("queue %v, want arrival order %v", got, fields)
	}
	// Deadlines grow along the queue: each is the one ahead plus the wait time.
	byDeadline, err := e.do(t, "ZRANGE", timeouts, "0", "-1").AsStrSlice()
	if err != nil || !slices.Equal(byDeadline, fields) {
		t.Fatalf("timeouts by score %v (%v), want the queue order", byDeadline, err)
	}
	// A newcomer trying without waiting, all along, must never take the lock past the queue.
	stop := make(chan struct{})
	barged := make(chan int, 1)
	go func() {
		n := 0
		defer func() { barged <- n }()
		o := clients[1].NewOwner()
		m := clients[1].FairMutex(name, FairMutexOptions{})
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			ok, err := m.TryLock(ctx, o, 0, 0)
			if err != nil {
				t.Error(err)
				return
			}
			if !ok {
				continue
			}
			mu.Lock()
			if len(order) < waiters {
				n++
			}
			mu.Unlock()
			if err := m.Unlock(ctx, o); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	if err := clients[0].FairMutex(name, FairMutexOptions{}).Unlock(ctx, holder); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(stop)
	if n := <-barged; n != 0 {
		t.Fatalf("a newcomer took the lock %d times while waiters were queued", n)
	}
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d mutual exclusion violations", v)
	}
	want := make([]int, waiters)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(order, want) {
		t.Fatalf("grant order %v, want queue order", order)
	}
	e.assertNoKeys(t)
}

func TestFairReleaseWakesOnlyFirstWaiter(t *testing.T) {
	testFairReleaseWakesOnlyFirstWaiter(t, newEnv(t))
}

// testFairReleaseWakesOnlyFirstWaiter checks the wire protocol a Redisson waiter relies on: a
// release publishes "0" on the first waiter's own channel, and on no other waiter's.
func testFairReleaseWakesOnlyFirstWaiter(t *testing.T, e *testEnv) {
	c := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	const name = "fair:wake"
	queue, timeouts := fairKeys(name)
	o := c.NewOwner()
	m := c.FairMutex(name, FairMutexOptions{})
	if err := m.Lock(ctx, o); err != nil {
		t.Fatal(err)
	}
	due := time.Now().Add(time.Minute)
	enqueueByHand(t, e, name, "java-client:1", due)
	enqueueByHand(t, e, name, "java-client:2", due.Add(5*time.Second))
	msgs := fairListen(t, e, "redisson_lock__channel:{fair:wake}:java-client:1", "redisson_lock__channel:{fair:wake}:java-client:2")
	if err := m.Unlock(ctx, o); err != nil {
		t.Fatal(err)
	}
	select {
	case msg := <-msgs:
		if msg.Channel != "redisson_lock__channel:{fair:wake}:java-client:1" || msg.Message != "0" {
			t.Fatalf("release published %q on %s; want \"0\" to the first waiter", msg.Message, msg.Channel)
		}
	case <-ctx.Done():
		t.Fatal("the first waiter was not woken")
	}
	select {
	case msg := <-msgs:
		t.Fatalf("a release also published %q on %s", msg.Message, msg.Channel)
	case <-time.After(200 * time.Millisecond):
	}
	// The queue is untouched: the woken waiter takes its turn when it retries.
	if got := queued(t, e, queue); !slices.Equal(got, []string{"java-client:1", "java-client:2"}) {
		t.Fatalf("queue after the release: %v", got)
	}
	e.do(t, "DEL", queue)
	e.do(t, "DEL", timeouts)
	e.assertNoKeys(t)
}

func TestFairGiveUpLeavesQueue(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testFairGiveUpLeavesQueue(t, newEnv(t))
}

// testFairGiveUpLeavesQueue has one waiter run out of wait and one have its context cancelled:
// each leaves the queue and the timeouts, the deadlines of those behind come one wait time
// earlier, and the others still get the lock in order.
func testFairGiveUpLeavesQueue(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 30*time.Second)
	const name = "fair:giveup"
	queue, timeouts := fairKeys(name)
	holder := a.NewOwner()
	if err := a.FairMutex(name, FairMutexOptions{}).Lock(ctx, holder); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	lockAndRecord := func(c *Client, o Owner) {
		m := c.FairMutex(name, FairMutexOptions{})
		if err := m.Lock(ctx, o); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		order = append(order, o.Field())
		mu.Unlock()
		if err := m.Unlock(ctx, o); err != nil {
			t.Error(err)
		}
	}
	join := func(n int64) {
		t.Helper()
		waitFor(t, func() bool { return e.int(t, "LLEN", queue) == n })
	}
	score := func(field string) int64 {
		t.Helper()
		s, err := e.do(t, "ZSCORE", timeouts, field).AsInt64()
		if err != nil {
			t.Fatalf("ZSCORE %s: %v", field, err)
		}
		return s
	}
	var wg sync.WaitGroup
	w0, w1, w2, w3 := b.NewOwner(), b.NewOwner(), a.NewOwner(), b.NewOwner()
	wg.Add(1)
	go func() { defer wg.Done(); lockAndRecord(b, w0) }()
	join(1)
	gaveUp := make(chan error, 1)
	go func() {
		ok, err := b.FairMutex(name, FairMutexOptions{}).TryLock(ctx, w1, 2*time.Second, 0)
		if ok {
			err = errors.New("TryLock took a held lock")
		}
		gaveUp <- err
	}()
	join(2)
	wg.Add(1)
	go func() { defer wg.Done(); lockAndRecord(a, w2) }()
	join(3)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cancelled := make(chan error, 1)
	go func() { cancelled <- b.FairMutex(name, FairMutexOptions{}).Lock(cctx, w3) }()
	join(4)
	before2, before3 := score(w2.Field()), score(w3.Field())

	if err := <-gaveUp; err != nil {
		t.Fatal(err)
	}
	if got := queued(t, e, queue); !slices.Equal(got, []string{w0.Field(), w2.Field(), w3.Field()}) {
		t.Fatalf("queue after a waiter gave up: %v", got)
	}
	if err := e.do(t, "ZSCORE", timeouts, w1.Field()).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("the waiter that gave up is still in the timeouts (%v)", err)
	}
	wait := DefaultFairWaitTime.Milliseconds()
	if s2, s3 := score(w2.Field()), score(w3.Field()); s2 != before2-wait || s3 != before3-wait {
		t.Fatalf("deadlines behind it moved %d and %d ms, want -%d", s2-before2, s3-before3, wait)
	}

	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock with a cancelled context = %v", err)
	}
	if got := queued(t, e, queue); !slices.Equal(got, []string{w0.Field(), w2.Field()}) {
		t.Fatalf("queue after a waiter was cancelled: %v", got)
	}
	if n := e.int(t, "ZCARD", timeouts); n != 2 {
		t.Fatalf("%d deadlines for 2 waiters", n)
	}
	if err := a.FairMutex(name, FairMutexOptions{}).Unlock(ctx, holder); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !slices.Equal(order, []string{w0.Field(), w2.Field()}) {
		t.Fatalf("grant order %v, want the remaining queue order", order)
	}
	e.assertNoKeys(t)
}

func TestFairStaleWaiterDoesNotBlock(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testFairStaleWaiterDoesNotBlock(t, newEnv(t))
}

// testFairStaleWaiterDoesNotBlock puts waiters that stopped retrying ahead of a live one: one
// queued by hand, one whose client lost its connection while it waited. Each holds up the queue
// only until its deadline; then the live waiter gets the lock and the dead entries are gone.
func testFairStaleWaiterDoesNotBlock(t *testing.T, e *testEnv) {
	const wait = 200 * time.Millisecond
	ctx := ctxT(t, 30*time.Second)
	c := e.client(t, Options{})

	t.Run("queued by hand", func(t *testing.T) {
		const name = "fair:stale:hand"
		queue, _ := fairKeys(name)
		m := c.FairMutex(name, FairMutexOptions{WaitTime: wait})
		enqueueByHand(t, e, name, "dead-client:7", time.Now().Add(time.Second))
		o := c.NewOwner()
		// Within its deadline the dead waiter is first in line, and the lock is not handed past it.
		if ok, err := m.TryLock(ctx, o, 0, 0); err != nil || ok {
			t.Fatalf("TryLock past a waiter within its deadline = %v, %v", ok, err)
		}
		if err := m.Lock(ctx, o); err != nil {
			t.Fatal(err)
		}
		if n := e.int(t, "EXISTS", queue); n != 0 {
			t.Fatalf("queue left behind: %v", queued(t, e, queue))
		}
		if err := m.Unlock(ctx, o); err != nil {
			t.Fatal(err)
		}
		e.assertNoKeys(t)
	})

	t.Run("client gone while queued", func(t *testing.T) {
		const name = "fair:stale:gone"
		// The waiter's deadline, and with it how long the queue keys outlive its last script
		// (twice the wait): long enough that a loaded machine reads the queue before they lapse.
		const wait = time.Second
		queue, _ := fairKeys(name)
		// The holder's lock is renewed until it lets go, so that the waiter cannot take it
		// before it dies, however slow the steps up to then are. With a lease that ran out
		// instead, a loaded CI machine woke the waiter at the expiry and it took the lock.
		hc := e.client(t, Options{LeaseTime: 2 * time.Second})
		holder := hc.NewOwner()
		hm := hc.FairMutex(name, FairMutexOptions{WaitTime: wait})
		if err := hm.Lock(ctx, holder); err != nil {
			t.Fatal(err)
		}
		// A waiter whose every connection goes through a proxy we can partition: once it is,
		// nothing the waiter sends reaches Redis, as if its process had died. Closing its
		// rueidis client instead is not a death: a command sent while Close runs can dial a
		// fresh connection and get through, and on a loaded machine the waiter's leave did.
		n := netem.New(netem.Conditions{})
		t.Cleanup(func() { n.Close() })
		x, err := New(Options{LeaseTime: 2 * time.Second, Redis: rueidis.ClientOption{
			InitAddress:      e.opt.InitAddress,
			ConnWriteTimeout: 300 * time.Millisecond,
			DialCtxFn: func(ctx context.Context, addr string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
				return n.Dial(ctx, "tcp", addr)
			},
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(x.Close)
		xo := x.NewOwner()
		done := make(chan error, 1)
		go func() { done <- x.FairMutex(name, FairMutexOptions{WaitTime: wait}).Lock(ctx, xo) }()
		waitFor(t, func() bool { return e.int(t, "LLEN", queue) == 1 })
		for _, p := range n.Stats() {
			if err := n.Partition(p.Upstream); err != nil {
				t.Fatal(err)
			}
		}
		// The waiter sleeps until its next attempt is due; closing its Client ends the wait.
		x.Close()
		if err := <-done; err == nil {
			t.Fatal("a waiter cut off from Redis got the lock")
		}
		if got := queued(t, e, queue); !slices.Equal(got, []string{xo.Field()}) {
			t.Fatalf("queue %v; want the dead waiter still in it", got)
		}
		if err := hm.Unlock(ctx, holder); err != nil {
			t.Fatal(err)
		}
		o := c.NewOwner()
		m := c.FairMutex(name, FairMutexOptions{WaitTime: wait})
		if err := m.Lock(ctx, o); err != nil {
			t.Fatal(err)
		}
		if n := e.int(t, "EXISTS", queue); n != 0 {
			t.Fatalf("queue left behind: %v", queued(t, e, queue))
		}
		if err := m.Unlock(ctx, o); err != nil {
			t.Fatal(err)
		}
		e.assertNoKeys(t)
	})
}

func TestFairTryLockNoWaitNeverQueues(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testFairTryLockNoWaitNeverQueues(t, newEnv(t))
}

func testFairTryLockNoWaitNeverQueues(t *testing.T, e *testEnv) {
	c := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	const name = "fair:try"
	queue, timeouts := fairKeys(name)
	m := c.FairMutex(name, FairMutexOptions{})
	holder, other := c.NewOwner(), c.NewOwner()
	if ok, err := m.TryLock(ctx, holder, 0, 0); err != nil || !ok {
		t.Fatalf("TryLock on a free lock = %v, %v", ok, err)
	}
	for range 3 {
		if ok, err := m.TryLock(ctx, other, 0, 0); err != nil || ok {
			t.Fatalf("TryLock on a held lock = %v, %v", ok, err)
		}
	}
	if n := e.int(t, "EXISTS", queue, timeouts); n != 0 {
		t.Fatalf("TryLock without wait created %d queue keys", n)
	}
	// Reentrant without the queue too.
	if ok, err := m.TryLock(ctx, holder, 0, 0); err != nil || !ok {
		t.Fatalf("reentrant TryLock = %v, %v", ok, err)
	}
	if n, ok := m.HeldBy(holder); !ok || n != 2 {
		t.Fatalf("HeldBy = %d, %v; want 2", n, ok)
	}
	if got := e.int(t, "HGET", name, holder.Field()); got != 2 {
		t.Fatalf("hold count %d, want 2", got)
	}
	for range 2 {
		if err := m.Unlock(ctx, holder); err != nil {
			t.Fatal(err)
		}
	}
	// A free lock with someone first in line is not taken past them, and still not queued for.
	enqueueByHand(t, e, name, "java-client:1", time.Now().Add(time.Minute))
	if ok, err := m.TryLock(ctx, other, 0, 0); err != nil || ok {
		t.Fatalf("TryLock past a waiter = %v, %v", ok, err)
	}
	if got := queued(t, e, queue); !slices.Equal(got, []string{"java-client:1"}) {
		t.Fatalf("queue %v after TryLock without wait", got)
	}
	e.do(t, "DEL", queue)
	e.do(t, "DEL", timeouts)
	e.assertNoKeys(t)
}

func TestFairUnlockByNonOwner(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testFairUnlockByNonOwner(t, newEnv(t))
}

func testFairUnlockByNonOwner(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	const name = "fair:nu"
	owner := a.NewOwner()
	if err := a.FairMutex(name, FairMutexOptions{}).Lock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		m     *FairMutex
		owner Owner
	}{
		{"other owner of the same client", a.FairMutex(name, FairMutexOptions{}), a.NewOwner()},
		{"owner of another client", b.FairMutex(name, FairMutexOptions{}), b.NewOwner()},
		{"another client using the same owner id", b.FairMutex(name, FairMutexOptions{}), b.OwnerWithID(1)},
	}
	for _, tc := range cases {
		if err := tc.m.Unlock(ctx, tc.owner); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s: Unlock = %v, want ErrNotOwner", tc.name, err)
		}
	}
	if err := a.FairMutex(name, FairMutexOptions{}).Unlock(ctx, Owner{}); !errors.Is(err, ErrNoOwner) {
		t.Errorf("zero owner: Unlock = %v, want ErrNoOwner", err)
	}
	if e.int(t, "EXISTS", name) != 1 {
		t.Fatal("a non-owner unlock released the lock")
	}
	if err := a.FairMutex(name, FairMutexOptions{}).Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	// Redisson answers success to an unlock of a lock that is gone; lockcore does not.
	if err := a.FairMutex(name, FairMutexOptions{}).Unlock(ctx, owner); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("unlock of a free lock = %v, want ErrNotOwner", err)
	}
	e.assertNoKeys(t)
}

func TestFairWatchdogRenewsWhileHeld(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testFairWatchdogRenewsWhileHeld(t, newEnv(t))
}

func testFairWatchdogRenewsWhileHeld(t *testing.T, e *testEnv) {
	// The Mutex watchdog test's 1 s lease renewed every 250 ms (a renewal may be 750 ms late):
	// with 300/100 ms a loaded machine (lockcore's suites 4 at a time, load 22) let the fair
	// lock's lease lapse on the native cluster, a stall of the machine, not of the watchdog.
	a := e.client(t, Options{LeaseTime: time.Second, RenewInterval: 250 * time.Millisecond})
	b := e.client(t, Options{})
	ctx := ctxT(t, 15*time.Second)
	const name = "fair:wd"
	ao := a.NewOwner()
	m := a.FairMutex(name, FairMutexOptions{})
	if err := m.Lock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3200 * time.Millisecond) // over three leases
	if ok, _ := b.FairMutex(name, FairMutexOptions{}).TryLock(ctx, b.NewOwner(), 0, 0); ok {
		t.Fatal("lock lost while held: the watchdog did not renew it")
	}
	if pttl := e.int(t, "PTTL", name); pttl <= 0 {
		t.Fatalf("PTTL %d while held", pttl)
	}
	if a.renewalCount() < 3 {
		t.Fatalf("%d renewals in over three leases", a.renewalCount())
	}
	if err := m.Unlock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	assertRenewalsStop(t, a, 250*time.Millisecond)
	e.assertNoKeys(t)
}

func TestFairMutualExclusionAndReentry(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testFairMutualExclusionAndReentry(t, newEnv(t))
}

// testFairMutualExclusionAndReentry runs 16 goroutines on two clients through a fair lock with
// nested holds, and checks no two hold it at once.
func testFairMutualExclusionAndReentry(t *testing.T, e *testEnv) {
	clients := []*Client{e.client(t, Options{}), e.client(t, Options{})}
	ctx := ctxT(t, 60*time.Second)
	const workers, rounds = 16, 20
	var holders, violations, grants atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[w%len(clients)]
			o := c.NewOwner()
			m := c.FairMutex("fair:mx", FairMutexOptions{})
			for range rounds {
				if err := m.Lock(ctx, o); err != nil {
					t.Error(err)
					return
				}
				if holders.Add(1) != 1 {
					violations.Add(1)
				}
				if err := m.Lock(ctx, o); err != nil { // nested
					t.Error(err)
					return
				}
				grants.Add(1)
				holders.Add(-1)
				for range 2 {
					if err := m.Unlock(ctx, o); err != nil {
						t.Error(fmt.Errorf("unlock: %w", err))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d mutual exclusion violations", v)
	}
	if g := grants.Load(); g != workers*rounds {
		t.Fatalf("%d grants, want %d", g, workers*rounds)
	}
	e.assertNoKeys(t)
}

// Audit 2 (found by TestChaos's OOM episodes): a waiter that gives up leaves the queue, and its
// leave moves the waiters behind it up by a write (ZINCRBY) that a server over maxmemory refuses.
// Refused, the leave was dropped as if answered, and the entry held up the waiters behind it
// until its deadline (one fair wait time, 5 s, past the lock's expiry); it is retried now, as an
// unanswered one is, and goes once the server takes writes again.
func TestFairLeaveRefusedByOOMIsRetried(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	other := e.client(t, Options{})
	ctx := ctxT(t, 30*time.Second)
	name := "fairoom"
	queue, _ := fairKeys(name)
	holder := other.NewOwner()
	if err := other.FairMutex(name, FairMutexOptions{}).Lock(ctx, holder); err != nil {
		t.Fatal(err)
	}
	w1, w2 := c.NewOwner(), other.NewOwner()
	w1ctx, giveUp := context.WithCancel(ctx)
	got1 := make(chan error, 1)
	go func() {
		_, err := c.FairMutex(name, FairMutexOptions{}).TryLock(w1ctx, w1, 20*time.Second, 0)
		got1 <- err
	}()
	waitFor(t, func() bool { return len(queued(t, e, queue)) == 1 })
	got2 := make(chan error, 1)
	go func() {
		ok, err := other.FairMutex(name, FairMutexOptions{}).TryLock(ctx, w2, 20*time.Second, 0)
		if ok {
			err = other.FairMutex(name, FairMutexOptions{}).Unlock(ctx, w2)
		}
		got2 <- err
	}()
	waitFor(t, func() bool { return len(queued(t, e, queue)) == 2 })
	e.do(t, "CONFIG", "SET", "maxmemory", "1")
	giveUp()
	<-got1
	time.Sleep(100 * time.Millisecond)
	e.do(t, "CONFIG", "SET", "maxmemory", "0")
	deadline := time.Now().Add(3 * time.Second)
	for q := queued(t, e, queue); len(q) != 1 || q[0] != w2.Field(); q = queued(t, e, queue) {
		if time.Now().After(deadline) {
			t.Fatalf("the waiter that gave up is still queued 3 s after the server took writes again: %v (w1 %s)", q, w1.Field())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := other.FairMutex(name, FairMutexOptions{}).Unlock(ctx, holder); err != nil {
		t.Fatal(err)
	}
	if err := <-got2; err != nil {
		t.Fatalf("the waiter behind: %v", err)
	}
	waitFor(t, func() bool { return len(e.keys(t)) == 0 })
}
