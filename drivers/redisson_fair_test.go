package drivers_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/lockcore"
)

// TestRedissonFairIsFIFO checks that redisson-fair grants a released lock to 8 queued waiters in
// the order they came, with Redisson's queue and deadline keys while they wait, and that the
// queue is gone afterwards.
func TestRedissonFairIsFIFO(t *testing.T) {
	cfg := single(t)
	cfg.Concurrency = 9
	l := openWith(t, "redisson-fair", cfg)
	if s := l.Settings(); s["lock"] != "RedissonFairLock" || !strings.Contains(s["protocol"], "Redisson "+drivers.RedissonDefaultVersion) {
		t.Errorf("settings %v: want the lock kind and the protocol version", s)
	}
	rdb := inspect(t, cfg.Addrs[0])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const name, waiters = "rfair:k", 8
	holder := l.NewWorker()
	if _, ok := holder.(drivers.MultiWorker); ok {
		t.Error("a redisson-fair worker is a MultiWorker, a kind the driver does not list")
	}
	if err := holder.Lock(ctx, name); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range waiters {
		wg.Add(1)
		w := l.NewWorker()
		go func() {
			defer wg.Done()
			if err := w.Lock(ctx, name); err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			if err := w.Unlock(ctx, name); err != nil {
				t.Errorf("waiter %d unlock: %v", i, err)
			}
		}()
		// Let waiter i queue before i+1 comes.
		for deadline := time.Now().Add(5 * time.Second); rdb.LLen(ctx, "redisson_lock_queue:{"+name+"}").Val() < int64(i+1); {
			if time.Now().After(deadline) {
				t.Fatalf("waiter %d never queued", i)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if n := rdb.ZCard(ctx, "redisson_lock_timeout:{"+name+"}").Val(); n != waiters {
		t.Errorf("%d deadlines for %d queued waiters", n, waiters)
	}
	if err := holder.Unlock(ctx, name); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !slices.Equal(order, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("grant order %v, want arrival order", order)
	}
	noKeysLeft(t, rdb)
}

// TestRedissonFairLockcoreInterop checks that redisson-fair and lockcore's FairMutex are one fair
// lock: a lockcore holder keeps a redisson waiter queued, the waiter is granted after the
// release (woken on its own channel), and a lockcore waiter queued behind it comes after it.
func TestRedissonFairLockcoreInterop(t *testing.T) {
	cfg := single(t)
	l := openWith(t, "redisson-fair", cfg)
	c := lockcoreOn(t, cfg.Addrs[0])
	rdb := inspect(t, cfg.Addrs[0])
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const name = "rfi:k"
	fm := c.FairMutex(name, lockcore.FairMutexOptions{})
	holder, later := c.NewOwner(), c.NewOwner()
	if err := fm.Lock(ctx, holder); err != nil {
		t.Fatal(err)
	}
	w := l.NewWorker()
	if err := w.Unlock(ctx, name); !errors.Is(err, drivers.ErrNotHeld) {
		t.Fatalf("redisson-fair unlock of lockcore's lock = %v, want ErrNotHeld", err)
	}
	var mu sync.Mutex
	var order []string
	granted := func(who string) {
		mu.Lock()
		order = append(order, who)
		mu.Unlock()
	}
	got := make(chan error, 2)
	go func() {
		err := w.Lock(ctx, name)
		if err == nil {
			granted("redisson")
			time.Sleep(20 * time.Millisecond)
			err = w.Unlock(ctx, name)
		}
		got <- err
	}()
	queue := "redisson_lock_queue:{" + name + "}"
	waitQueued := func(n int64) {
		for deadline := time.Now().Add(5 * time.Second); rdb.LLen(ctx, queue).Val() < n; {
			if time.Now().After(deadline) {
				t.Fatalf("queue %s never reached %d waiters", queue, n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitQueued(1)
	go func() {
		err := fm.Lock(ctx, later)
		if err == nil {
			granted("lockcore")
			err = fm.Unlock(ctx, later)
		}
		got <- err
	}()
	waitQueued(2)
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	early := slices.Clone(order)
	mu.Unlock()
	if len(early) != 0 {
		t.Fatalf("granted %v while lockcore held the lock", early)
	}
	if err := fm.Unlock(ctx, holder); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(order, []string{"redisson", "lockcore"}) {
		t.Fatalf("grant order %v, want the redisson waiter (queued first) then lockcore", order)
	}
	// And the other way round: lockcore cannot take or release a lock redisson-fair holds.
	if err := w.Lock(ctx, name); err != nil {
		t.Fatal(err)
	}
	if ok, err := fm.TryLock(ctx, holder, 0, 0); ok || err != nil {
		t.Fatalf("lockcore TryLock of redisson-fair's lock = %v, %v; want false", ok, err)
	}
	if err := fm.Unlock(ctx, holder); !errors.Is(err, lockcore.ErrNotOwner) {
		t.Fatalf("lockcore unlock of redisson-fair's lock = %v, want ErrNotOwner", err)
	}
	if err := w.Unlock(ctx, name); err != nil {
		t.Fatal(err)
	}
	noKeysLeft(t, rdb)
}

// TestRedissonFairLeavesQueue checks that a waiter whose context ends leaves the queue, so the
// next release goes to the one behind it at once rather than after its deadline.
func TestRedissonFairLeavesQueue(t *testing.T) {
	cfg := single(t)
	l := openWith(t, "redisson-fair", cfg)
	rdb := inspect(t, cfg.Addrs[0])
	ctx := context.Background()
	const name = "rfl:k"
	holder, quitter, stayer := l.NewWorker(), l.NewWorker(), l.NewWorker()
	if err := holder.Lock(ctx, name); err != nil {
		t.Fatal(err)
	}
	if !blocked(t, func(ctx context.Context) error { return quitter.Lock(ctx, name) }) {
		t.Fatal("a waiter got a held fair lock")
	}
	if n := rdb.LLen(ctx, "redisson_lock_queue:{"+name+"}").Val(); n != 0 {
		t.Fatalf("%d waiters queued after the only one gave up", n)
	}
	got := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second) // below threadWaitTime
		defer cancel()
		err := stayer.Lock(wctx, name)
		if err == nil {
			err = stayer.Unlock(ctx, name)
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := holder.Unlock(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter behind one that left: %v", err)
	}
	noKeysLeft(t, rdb)
}
