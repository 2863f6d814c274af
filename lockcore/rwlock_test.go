package lockcore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

func TestRWExclusion64Goroutines(t *testing.T) { testRWExclusion64Goroutines(t, newEnv(t)) }

// testRWExclusion64Goroutines runs 64 goroutines over two clients, a quarter of them writers,
// and checks inside every critical section that a writer is alone and readers never meet a
// writer; it also checks that readers did share the lock.
func testRWExclusion64Goroutines(t *testing.T, e *testEnv) {
	clients := []*Client{e.client(t, Options{}), e.client(t, Options{})}
	const workers, rounds = 64, 30
	var readers, writers, maxReaders atomic.Int32
	var violations, reads, writes atomic.Int64
	ctx := ctxT(t, 90*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[w%2]
			rw := c.RWMutex("rwx")
			owner := c.NewOwner()
			for i := range rounds {
				if (w+i)%4 == 0 {
					if err := rw.Lock(ctx, owner); err != nil {
						errs <- err
						return
					}
					if writers.Add(1) != 1 || readers.Load() != 0 {
						violations.Add(1)
					}
					time.Sleep(100 * time.Microsecond)
					writers.Add(-1)
					writes.Add(1)
					if err := rw.Unlock(ctx, owner); err != nil {
						errs <- err
						return
					}
					continue
				}
				if err := rw.RLock(ctx, owner); err != nil {
					errs <- err
					return
				}
				n := readers.Add(1)
				for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
				}
				if writers.Load() != 0 {
					violations.Add(1)
				}
				time.Sleep(500 * time.Microsecond) // long enough for other readers to join
				readers.Add(-1)
				reads.Add(1)
				if err := rw.RUnlock(ctx, owner); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d read-write exclusion violations", v)
	}
	if got := reads.Load() + writes.Load(); got != workers*rounds {
		t.Fatalf("%d acquisitions, want %d", got, workers*rounds)
	}
	if m := maxReaders.Load(); m < 2 {
		t.Fatalf("at most %d reader at a time: readers did not share the lock", m)
	}
	t.Logf("%d reads, %d writes, up to %d readers at once", reads.Load(), writes.Load(), maxReaders.Load())
	e.assertNoKeys(t)
}

func TestRWWriteUnlockWakesAllReaders(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testRWWriteUnlockWakesAllReaders(t, newEnv(t))
}

// testRWWriteUnlockWakesAllReaders parks readers of two clients behind a writer whose lease is
// 30 s: only the write release's "1" can let them all in quickly.
func testRWWriteUnlockWakesAllReaders(t *testing.T, e *testEnv) {
	w := e.client(t, Options{})
	clients := []*Client{e.client(t, Options{}), e.client(t, Options{})}
	ctx := ctxT(t, 25*time.Second)
	wo := w.NewOwner()
	if err := w.RWMutex("wake-rw").Lock(ctx, wo); err != nil {
		t.Fatal(err)
	}
	const perClient = 4
	var in atomic.Int32
	all := make(chan struct{})
	got := make(chan time.Time, 2*perClient)
	owners := make([]Owner, 0, 2*perClient)
	for _, c := range clients {
		for range perClient {
			o := c.NewOwner()
			owners = append(owners, o)
			go func() {
				if err := c.RWMutex("wake-rw").RLock(ctx, o); err != nil {
					t.Error(err)
					got <- time.Time{}
					return
				}
				got <- time.Now()
				// Hold until every reader is in: they hold the lock together.
				if in.Add(1) == 2*perClient {
					close(all)
				}
				select {
				case <-all:
				case <-ctx.Done():
				}
			}()
		}
	}
	channel := "redisson_rwlock:{wake-rw}"
	waitFor(t, func() bool { return e.numsub(t, channel) == 2 }) // one subscription per client
	time.Sleep(50 * time.Millisecond)                            // let the readers park
	released := time.Now()
	if err := w.RWMutex("wake-rw").Unlock(ctx, wo); err != nil {
		t.Fatal(err)
	}
	for range 2 * perClient {
		select {
		case at := <-got:
			if at.IsZero() {
				t.FailNow()
			}
			if d := at.Sub(released); d > 5*time.Second {
				t.Fatalf("a reader took %v after the write release; it was not woken", d)
			}
		case <-ctx.Done():
			t.Fatal("readers were not all woken by the write release")
		}
	}
	select {
	case <-all:
	case <-ctx.Done():
		t.Fatal("readers did not hold the lock together")
	}
	for i, o := range owners {
		if err := clients[i/perClient].RWMutex("wake-rw").RUnlock(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return e.numsub(t, channel) == 0 })
	e.assertNoKeys(t)
}

func TestRWCrashedReaderDoesNotPin(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testRWCrashedReaderDoesNotPin(t, newEnv(t))
}

func testRWCrashedReaderDoesNotPin(t *testing.T, e *testEnv) {
	ctx := ctxT(t, 20*time.Second)
	live := e.client(t, Options{})
	writer := e.client(t, Options{})

	// A reader with a short explicit lease crashes while a live reader keeps the hash alive (its
	// lease is 30 s): when the live reader leaves, the crashed hold must not keep the lock.
	crashed := e.client(t, Options{})
	co := crashed.NewOwner()
	if err := crashed.RWMutex("crash").RLockLease(ctx, co, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	crashed.Close()
	lo := live.NewOwner()
	if err := live.RWMutex("crash").RLock(ctx, lo); err != nil {
		t.Fatal(err)
	}
	wo := writer.NewOwner()
	if ok, err := writer.RWMutex("crash").TryLock(ctx, wo, 0, 0); ok || err != nil {
		t.Fatalf("writer TryLock while read-held = %v, %v", ok, err)
	}
	crashedKey := "{crash}:" + co.Field() + ":rwlock_timeout:1"
	waitFor(t, func() bool { return e.int(t, "EXISTS", crashedKey) == 0 })
	if err := live.RWMutex("crash").RUnlock(ctx, lo); err != nil {
		t.Fatal(err)
	}
	if ok, err := writer.RWMutex("crash").TryLock(ctx, wo, 0, 0); !ok || err != nil {
		t.Fatalf("writer TryLock after the live reader left = %v, %v; the crashed reader pins the lock", ok, err)
	}
	if err := writer.RWMutex("crash").Unlock(ctx, wo); err != nil {
		t.Fatal(err)
	}

	// A reader renewed by its watchdog crashes alone: the lock goes with its last lease, and a
	// waiting writer gets it then, long before the writer's own 30 s retry would.
	short := e.client(t, Options{LeaseTime: 600 * time.Millisecond, RenewInterval: 200 * time.Millisecond})
	if err := short.RWMutex("crash").RLock(ctx, short.NewOwner()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // renewed at least once
	short.Close()
	start := time.Now()
	ok, err := writer.RWMutex("crash").TryLock(ctx, wo, 5*time.Second, 0)
	if !ok || err != nil {
		t.Fatalf("writer TryLock after the reader crashed = %v, %v", ok, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("writer waited %v for a reader with a 600ms lease", d)
	}
	if err := writer.RWMutex("crash").Unlock(ctx, wo); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(e.keys(t)) == 0 })
	e.assertNoKeys(t)
}

func TestRWDowngrade(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testRWDowngrade(t, newEnv(t))
}

func testRWDowngrade(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	ao, bo := a.NewOwner(), b.NewOwner()
	rwa, rwb := a.RWMutex("down"), b.RWMutex("down")
	if err := rwa.Lock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	if err := rwa.RLock(ctx, ao); err != nil { // the writer reads too
		t.Fatalf("writer RLock: %v", err)
	}
	if ok, err := rwb.TryRLock(ctx, bo, 0, 0); ok || err != nil {
		t.Fatalf("other reader while write-held = %v, %v", ok, err)
	}
	if err := rwa.Unlock(ctx, ao); err != nil { // write → read
		t.Fatal(err)
	}
	if mode, _ := e.do(t, "HGET", "down", "mode").ToString(); mode != "read" {
		t.Fatalf("mode %q after the write release with a read hold left, want read", mode)
	}
	if ok, err := rwb.TryRLock(ctx, bo, 0, 0); !ok || err != nil {
		t.Fatalf("other reader after the downgrade = %v, %v; want to share", ok, err)
	}
	if ok, err := rwb.TryLock(ctx, b.NewOwner(), 0, 0); ok || err != nil {
		t.Fatalf("writer while read-held = %v, %v", ok, err)
	}
	if err := rwa.RUnlock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	if err := rwb.RUnlock(ctx, bo); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}

func TestRWUpgradeRefused(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testRWUpgradeRefused(t, newEnv(t))
}

func testRWUpgradeRefused(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	ao, bo := a.NewOwner(), b.NewOwner()
	rw := a.RWMutex("up")
	if err := rw.RLock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	if ok, err := rw.TryLock(ctx, ao, time.Second, 0); ok || !errors.Is(err, ErrUpgrade) {
		t.Fatalf("reader TryLock = %v, %v; want false, ErrUpgrade", ok, err)
	}
	// Lock would wait for itself forever; it must fail at once instead.
	lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := rw.Lock(lctx, ao); !errors.Is(err, ErrUpgrade) {
		t.Fatalf("reader Lock = %v, want ErrUpgrade", err)
	}
	// Shared with another reader, still an upgrade.
	if err := b.RWMutex("up").RLock(ctx, bo); err != nil {
		t.Fatal(err)
	}
	if err := rw.Lock(lctx, ao); !errors.Is(err, ErrUpgrade) {
		t.Fatalf("reader Lock beside another reader = %v, want ErrUpgrade", err)
	}
	if err := rw.RUnlock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	// A read hold whose lease ran out is no hold: asking for the write lock then just waits.
	if err := rw.RLockLease(ctx, ao, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return e.int(t, "EXISTS", "{up}:"+ao.Field()+":rwlock_timeout:1") == 0 })
	if ok, err := rw.TryLock(ctx, ao, 0, 0); ok || err != nil {
		t.Fatalf("TryLock by an expired reader = %v, %v; want false, nil", ok, err)
	}
	if err := b.RWMutex("up").RUnlock(ctx, bo); err != nil {
		t.Fatal(err)
	}
	if err := rw.Lock(lctx, ao); err != nil {
		t.Fatalf("Lock once no read hold is left: %v", err)
	}
	if err := rw.Unlock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}

func TestRWUnlockByNonOwner(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testRWUnlockByNonOwner(t, newEnv(t))
}

func testRWUnlockByNonOwner(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	reader, writer := a.NewOwner(), a.NewOwner()
	rw := a.RWMutex("rwnu")

	// Nothing held at all.
	if err := rw.RUnlock(ctx, reader); !errors.Is(err, ErrNotOwner) {
		t.Errorf("RUnlock of a free lock = %v, want ErrNotOwner", err)
	}
	if err := rw.Unlock(ctx, writer); !errors.Is(err, ErrNotOwner) {
		t.Errorf("Unlock of a free lock = %v, want ErrNotOwner", err)
	}

	if err := rw.RLock(ctx, reader); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		unlock func() error
	}{
		{"reader's write unlock", func() error { return rw.Unlock(ctx, reader) }},
		{"other owner's read unlock", func() error { return rw.RUnlock(ctx, a.NewOwner()) }},
		{"other client's read unlock", func() error { return b.RWMutex("rwnu").RUnlock(ctx, b.NewOwner()) }},
		{"other client, same owner id", func() error { return b.RWMutex("rwnu").RUnlock(ctx, b.OwnerWithID(1)) }},
		{"read half as a Locker", func() error { return rw.ReadLocker().Unlock(ctx, writer) }},
	}
	for _, tc := range cases {
		if err := tc.unlock(); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s = %v, want ErrNotOwner", tc.name, err)
		}
	}
	if err := rw.RUnlock(ctx, reader); err != nil {
		t.Fatal(err)
	}

	if err := rw.Lock(ctx, writer); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		unlock func() error
	}{
		{"other owner's write unlock", func() error { return rw.Unlock(ctx, reader) }},
		{"writer's read unlock", func() error { return rw.RUnlock(ctx, writer) }},
		{"other client's write unlock", func() error { return b.RWMutex("rwnu").Unlock(ctx, b.NewOwner()) }},
		{"write half as a Locker", func() error { return rw.WriteLocker().Unlock(ctx, reader) }},
	} {
		if err := tc.unlock(); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s = %v, want ErrNotOwner", tc.name, err)
		}
	}
	if err := rw.Unlock(ctx, Owner{}); !errors.Is(err, ErrNoOwner) {
		t.Errorf("zero owner Unlock = %v, want ErrNoOwner", err)
	}
	if mode, _ := e.do(t, "HGET", "rwnu", "mode").ToString(); mode != "write" {
		t.Fatalf("mode %q: a non-owner unlock changed the lock", mode)
	}
	if err := rw.Unlock(ctx, writer); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}

func TestRWRedissonLayout(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testRWRedissonLayout(t, newEnv(t))
}

// testRWRedissonLayout checks the keys, fields and messages a Redisson client reads and writes.
func testRWRedissonLayout(t *testing.T, e *testEnv) {
	c := e.client(t, Options{ID: "5f0b7c3e-0000-4000-8000-000000000002"})
	ctx := ctxT(t, 10*time.Second)
	o := c.OwnerWithID(7)
	rw := c.RWMutex("doc")
	msgs := e.listen(t, "redisson_rwlock:{doc}")

	for range 2 {
		if err := rw.RLock(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if mode, _ := e.do(t, "HGET", "doc", "mode").ToString(); mode != "read" {
		t.Fatalf("mode %q, want read", mode)
	}
	if n := e.int(t, "HGET", "doc", o.Field()); n != 2 {
		t.Fatalf("read count %d, want 2", n)
	}
	for _, n := range []string{"1", "2"} {
		key := "{doc}:5f0b7c3e-0000-4000-8000-000000000002:7:rwlock_timeout:" + n
		if pttl := e.int(t, "PTTL", key); pttl <= 20000 || pttl > 30000 {
			t.Fatalf("%s PTTL %d, want the 30 s lease", key, pttl)
		}
	}
	for range 2 {
		if err := rw.RUnlock(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.Lock(ctx, o); err != nil {
		t.Fatal(err)
	}
	if mode, _ := e.do(t, "HGET", "doc", "mode").ToString(); mode != "write" {
		t.Fatalf("mode %q, want write", mode)
	}
	if n := e.int(t, "HGET", "doc", o.Field()+":write"); n != 1 {
		t.Fatalf("write count %d under field %q, want 1", n, o.Field()+":write")
	}
	if err := rw.Unlock(ctx, o); err != nil {
		t.Fatal(err)
	}
	// The last read release publishes "0"; the write release "1" (Redisson's READ_UNLOCK_MESSAGE).
	for _, want := range []string{unlockMessage, wakeAllMessage} {
		select {
		case m := <-msgs:
			if m != want {
				t.Fatalf("message %q, want %q", m, want)
			}
		case <-ctx.Done():
			t.Fatalf("no %q message", want)
		}
	}
	e.assertNoKeys(t)
}

func TestRWWatchdogRenewsReadAndWriteHolds(t *testing.T) {
	testRWWatchdogRenewsReadAndWriteHolds(t, newEnv(t))
}

func testRWWatchdogRenewsReadAndWriteHolds(t *testing.T, e *testEnv) {
	a := e.client(t, Options{LeaseTime: 300 * time.Millisecond, RenewInterval: 100 * time.Millisecond})
	b := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	r1, r2 := a.NewOwner(), a.NewOwner()
	rw := a.RWMutex("wdrw")
	for _, o := range []Owner{r1, r2, r2} {
		if err := rw.RLock(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1200 * time.Millisecond) // four leases
	for _, key := range []string{
		"wdrw",
		"{wdrw}:" + r1.Field() + ":rwlock_timeout:1",
		"{wdrw}:" + r2.Field() + ":rwlock_timeout:1",
		"{wdrw}:" + r2.Field() + ":rwlock_timeout:2",
	} {
		if pttl := e.int(t, "PTTL", key); pttl <= 0 {
			t.Fatalf("%s PTTL %d after four leases: read holds were not renewed", key, pttl)
		}
	}
	if ok, _ := b.RWMutex("wdrw").TryLock(ctx, b.NewOwner(), 0, 0); ok {
		t.Fatal("a writer got in while read holds were renewed")
	}
	for _, o := range []Owner{r2, r1, r2} {
		if err := rw.RUnlock(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	e.assertNoKeys(t)

	if err := rw.Lock(ctx, r1); err != nil {
		t.Fatal(err)
	}
	renewals := a.renewalCount()
	time.Sleep(1200 * time.Millisecond)
	if ok, _ := b.RWMutex("wdrw").TryRLock(ctx, b.NewOwner(), 0, 0); ok {
		t.Fatal("a reader got in: the write hold was not renewed")
	}
	if a.renewalCount()-renewals < 3 {
		t.Fatalf("%d renewals of the write hold in four leases", a.renewalCount()-renewals)
	}
	if err := rw.Unlock(ctx, r1); err != nil {
		t.Fatal(err)
	}
	assertRenewalsStop(t, a, 100*time.Millisecond)
	if n := a.holds.len(); n != 0 {
		t.Fatalf("%d holds still tracked after every release", n)
	}
	e.assertNoKeys(t)
}

// listen subscribes a plain client, as a Redisson client would, to channel in the env's pub/sub
// mode and returns its messages; it is subscribed when listen returns.
func (e *testEnv) listen(t testing.TB, channel string) <-chan string {
	t.Helper()
	out := make(chan string, 16)
	subscribed := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	kind := "subscribe"
	cmd := e.rdb.B().Subscribe().Channel(channel).Build()
	if e.sharded {
		kind = "ssubscribe"
		cmd = e.rdb.B().Ssubscribe().Channel(channel).Build()
	}
	var once sync.Once
	go func() {
		defer close(done)
		hook := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
			if s.Kind == kind {
				once.Do(func() { close(subscribed) })
			}
		})
		e.rdb.Receive(hook, cmd, func(m rueidis.PubSubMessage) {
			select {
			case out <- m.Message:
			default:
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-subscribed:
	case <-time.After(5 * time.Second):
		t.Fatalf("subscribe to %s: not confirmed in 5s", channel)
	}
	return out
}

// keys returns every key on every master.
func (e *testEnv) keys(t testing.TB) []string {
	t.Helper()
	var all []string
	for _, res := range e.onMasters(t, "KEYS", "*") {
		keys, err := res.AsStrSlice()
		if err != nil {
			t.Fatalf("KEYS: %v", err)
		}
		all = append(all, keys...)
	}
	return all
}
