package lockcore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

func TestMultiLockOppositeOrdersNeverDeadlockOrOverlap(t *testing.T) {
	t.Parallel() // its own servers: it overlaps the other long ones
	testMultiLockOppositeOrdersNeverDeadlockOrOverlap(t, newEnv(t))
}

// testMultiLockOppositeOrdersNeverDeadlockOrOverlap has two goroutines, on two clients, take
// {A,B} and {B,A} back to back for 10 s (2 s with -short): neither may ever wait forever, and
// each lock has one holder at a time. On a cluster, A and B live in different slots.
func testMultiLockOppositeOrdersNeverDeadlockOrOverlap(t *testing.T, e *testEnv) {
	run := 10 * time.Second
	if testing.Short() {
		run = 2 * time.Second
	}
	const maxRounds = 200000
	clients := []*Client{e.client(t, Options{}), e.client(t, Options{})}
	var occA, occB atomic.Int32
	var violations atomic.Int64
	var rounds [2]atomic.Int64
	stop := time.Now().Add(run)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[g]
			a, b := Locker(c.Mutex("mlA")), Locker(c.Mutex("mlB"))
			ml := NewMultiLock([]Locker{a, b}, MultiLockOptions{})
			if g == 1 {
				ml = NewMultiLock([]Locker{b, a}, MultiLockOptions{})
			}
			owner := c.NewOwner()
			for i := 0; i < maxRounds && time.Now().Before(stop); i++ {
				// A round that cannot finish in 10 s is a deadlock: both leases are 30 s and
				// renewed, so nothing else would end it.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := ml.Lock(ctx, owner)
				cancel()
				if err != nil {
					errs <- err
					return
				}
				if occA.Add(1) != 1 || occB.Add(1) != 1 {
					violations.Add(1)
				}
				occA.Add(-1)
				occB.Add(-1)
				rounds[g].Add(1)
				if err := ml.Unlock(context.Background(), owner); err != nil {
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
		t.Fatalf("%d rounds where a lock had two holders", v)
	}
	if rounds[0].Load() == 0 || rounds[1].Load() == 0 {
		t.Fatalf("rounds %d and %d: one goroutine never got both locks", rounds[0].Load(), rounds[1].Load())
	}
	t.Logf("%d + %d rounds in %v", rounds[0].Load(), rounds[1].Load(), run)
	e.assertNoKeys(t)
}

func TestMultiLockPartialFailureReleases(t *testing.T) {
	testMultiLockPartialFailureReleases(t, newEnv(t))
}

// testMultiLockPartialFailureReleases makes the MultiLock fail after it took some locks — a
// lock held elsewhere, a component error, ctx ending — and checks it holds none afterwards.
func testMultiLockPartialFailureReleases(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 20*time.Second)
	other := b.NewOwner()
	if err := b.Mutex("pf:2").Lock(ctx, other); err != nil { // the last lock in name order
		t.Fatal(err)
	}
	owner := a.NewOwner()
	locks := []Locker{a.Mutex("pf:2"), a.Mutex("pf:0"), a.RWMutex("pf:1").ReadLocker()}
	ml := NewMultiLock(locks, MultiLockOptions{})
	if ok, err := ml.TryLock(ctx, owner, 0, 0); ok || err != nil {
		t.Fatalf("TryLock with pf:2 held elsewhere = %v, %v", ok, err)
	}
	assertOnlyKeys(t, e, "pf:2")
	start := time.Now()
	if ok, err := NewMultiLock(locks, MultiLockOptions{StepWait: 100 * time.Millisecond}).TryLock(ctx, owner, 400*time.Millisecond, time.Second); ok || err != nil {
		t.Fatalf("TryLock with wait, pf:2 held elsewhere = %v, %v", ok, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("TryLock with a 400ms wait took %v", d)
	}
	assertOnlyKeys(t, e, "pf:2")
	lctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := ml.Lock(lctx, owner)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock until ctx ends = %v, want DeadlineExceeded", err)
	}
	assertOnlyKeys(t, e, "pf:2")
	if err := b.Mutex("pf:2").Unlock(ctx, other); err != nil {
		t.Fatal(err)
	}

	// A component error (a reader asking for a write lock) fails the MultiLock with that error.
	rw := a.RWMutex("pf:3")
	if err := rw.RLock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	bad := NewMultiLock([]Locker{a.Mutex("pf:0"), rw.WriteLocker()}, MultiLockOptions{})
	if ok, err := bad.TryLock(ctx, owner, 0, 0); ok || !errors.Is(err, ErrUpgrade) {
		t.Fatalf("TryLock over an upgrade = %v, %v; want ErrUpgrade", ok, err)
	}
	if e.int(t, "EXISTS", "pf:0") != 0 {
		t.Fatal("pf:0 left held after a component error")
	}
	if err := rw.RUnlock(ctx, owner); err != nil {
		t.Fatal(err)
	}

	// Once free, the same MultiLock takes all three, and releases them all.
	if ok, err := ml.TryLock(ctx, owner, time.Second, 0); !ok || err != nil {
		t.Fatalf("TryLock when free = %v, %v", ok, err)
	}
	for _, k := range []string{"pf:0", "pf:1", "pf:2"} {
		if e.int(t, "EXISTS", k) != 1 {
			t.Fatalf("%s not held after the MultiLock was granted", k)
		}
	}
	if err := ml.Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}

// assertOnlyKeys fails unless the deployment holds exactly the keys want.
func assertOnlyKeys(t *testing.T, e *testEnv, want ...string) {
	t.Helper()
	got := e.keys(t)
	if len(got) != len(want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	for _, k := range want {
		if e.int(t, "EXISTS", k) != 1 {
			t.Fatalf("keys %v, want %v", got, want)
		}
	}
}

func TestMultiLockMixedKindsAndNonOwner(t *testing.T) {
	testMultiLockMixedKindsAndNonOwner(t, newEnv(t))
}

// testMultiLockMixedKindsAndNonOwner holds a fair lock, a Mutex, a read lock and a write lock
// as one, given in no particular order, with an explicit lease, and checks what others can
// still take and that non-owners cannot release.
func testMultiLockMixedKindsAndNonOwner(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	owner := a.NewOwner()
	ml := NewMultiLock([]Locker{a.RWMutex("mk:w").WriteLocker(), a.Mutex("mk:m"), a.RWMutex("mk:r").ReadLocker(), a.FairMutex("mk:f", FairMutexOptions{})}, MultiLockOptions{})
	if got := ml.Name(); got != "mk:f,mk:m,mk:r,mk:w" {
		t.Fatalf("Name %q: locks not in name order", got)
	}
	if ok, err := ml.TryLock(ctx, owner, 0, 5*time.Second); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	for _, k := range []string{"mk:f", "mk:m", "mk:r", "mk:w"} {
		if pttl := e.int(t, "PTTL", k); pttl <= 0 || pttl > 5000 {
			t.Fatalf("%s PTTL %d, want the 5 s lease", k, pttl)
		}
	}
	bo := b.NewOwner()
	if ok, _ := b.RWMutex("mk:r").TryRLock(ctx, bo, 0, 0); !ok {
		t.Fatal("another reader could not share the read lock")
	}
	if err := b.RWMutex("mk:r").RUnlock(ctx, bo); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.Mutex("mk:m").TryLock(ctx, bo, 0, 0); ok {
		t.Fatal("the mutex was taken while the MultiLock held it")
	}
	if ok, _ := b.RWMutex("mk:w").TryRLock(ctx, bo, 0, 0); ok {
		t.Fatal("the write lock let a reader in")
	}
	if ok, _ := b.FairMutex("mk:f", FairMutexOptions{}).TryLock(ctx, bo, 0, 0); ok {
		t.Fatal("the fair lock was taken while the MultiLock held it")
	}

	for name, o := range map[string]Owner{"other owner": a.NewOwner(), "other client": bo} {
		err := ml.Unlock(ctx, o)
		if !errors.Is(err, ErrNotOwner) {
			t.Fatalf("%s Unlock = %v, want ErrNotOwner", name, err)
		}
	}
	for _, k := range []string{"mk:f", "mk:m", "mk:r", "mk:w"} {
		if e.int(t, "EXISTS", k) != 1 {
			t.Fatalf("%s released by a non-owner unlock", k)
		}
	}
	if err := ml.Unlock(ctx, Owner{}); !errors.Is(err, ErrNoOwner) {
		t.Fatalf("zero owner Unlock = %v", err)
	}
	if err := ml.Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if err := ml.Unlock(ctx, owner); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("second Unlock = %v, want ErrNotOwner", err)
	}
	e.assertNoKeys(t)
}

// TestFamilyOnClusterRWMulti runs the read-write lock and MultiLock suites on one 6-node Redis 7
// cluster: helper keys in the lock's slot, sharded pub/sub, MultiLock across slots.
func TestFamilyOnClusterRWMulti(t *testing.T) {
	t.Parallel() // its own servers (containers, a cluster): it overlaps the other long ones
	if testing.Short() {
		t.Skip("starts a 6-node cluster")
	}
	cl := redistest.NewCluster(t)
	e := newEnvFor(t, rueidis.ClientOption{InitAddress: cl.Addrs()}, cl.Masters(), true)
	if slotOf("mlA") == slotOf("mlB") {
		t.Fatal("mlA and mlB share a slot; the cross-slot case needs other names")
	}
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *testEnv)
	}{
		{"RWExclusion64Goroutines", testRWExclusion64Goroutines},
		{"RWWriteUnlockWakesAllReaders", testRWWriteUnlockWakesAllReaders},
		{"RWCrashedReaderDoesNotPin", testRWCrashedReaderDoesNotPin},
		{"RWDowngrade", testRWDowngrade},
		{"RWUpgradeRefused", testRWUpgradeRefused},
		{"RWUnlockByNonOwner", testRWUnlockByNonOwner},
		{"RWRedissonLayout", testRWRedissonLayout},
		{"RWWatchdogRenewsReadAndWriteHolds", testRWWatchdogRenewsReadAndWriteHolds},
		{"MultiLockOppositeOrders", testMultiLockOppositeOrdersNeverDeadlockOrOverlap},
		{"MultiLockPartialFailureReleases", testMultiLockPartialFailureReleases},
		{"MultiLockMixedKindsAndNonOwner", testMultiLockMixedKindsAndNonOwner},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, e) })
	}
}

// slotOf is the cluster slot of key (CRC16 mod 16384, hash tags honoured).
func slotOf(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}
