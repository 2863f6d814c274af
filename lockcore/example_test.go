package lockcore_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/lockcore"
	"github.com/redis/rueidis"
)

// The examples run as tests against redis-servers the test binary starts (redisAddr,
// masterAddrs: see TestMain); each uses lock names of its own and releases what it takes.

// newClient connects a lockcore Client to addr with opt's other settings.
func newClient(addr string, opt lockcore.Options) *lockcore.Client {
	opt.Redis = rueidis.ClientOption{InitAddress: []string{addr}}
	c, err := lockcore.New(opt)
	if err != nil {
		panic(err)
	}
	return c
}

// Example shows the usual life of a lock: one Client per process, one Owner per holder.
func Example() {
	c, err := lockcore.New(lockcore.Options{Redis: rueidis.ClientOption{InitAddress: []string{redisAddr}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()

	owner := c.NewOwner() // one per logical holder, like a thread id in Redisson
	m := c.Mutex("orders:42")
	if err := m.Lock(ctx, owner); err != nil { // 30 s lease, renewed while held
		fmt.Println(err)
		return
	}
	fmt.Println("locked")

	// Elsewhere: give up after 100 ms, and let the lock expire after 5 s if never released.
	other := c.NewOwner()
	if ok, err := m.TryLock(ctx, other, 100*time.Millisecond, 5*time.Second); err == nil && !ok {
		fmt.Println("busy")
	}
	if err := m.Unlock(ctx, owner); err != nil {
		fmt.Println(err)
	}
	// Output:
	// locked
	// busy
}

// A Mutex is reentrant: its owner may take it again, and holds it until it has released it
// as many times. Releasing a lock one does not hold is an error, never a silent success.
func ExampleMutex_reentrant() {
	c := newClient(redisAddr, lockcore.Options{})
	defer c.Close()
	ctx := context.Background()
	m := c.Mutex("example:reentrant")
	owner := c.NewOwner()

	_ = m.Lock(ctx, owner)
	_ = m.Lock(ctx, owner) // the same owner again: the count goes to 2
	n, _ := m.HeldBy(owner)
	fmt.Println("holds:", n)

	_ = m.Unlock(ctx, owner)
	n, held := m.HeldBy(owner)
	fmt.Println("after one unlock:", n, held)
	_ = m.Unlock(ctx, owner)
	err := m.Unlock(ctx, owner)
	fmt.Println("third unlock:", errors.Is(err, lockcore.ErrNotOwner))
	// Output:
	// holds: 2
	// after one unlock: 1 true
	// third unlock: true
}

// TryLock with a wait of 0 makes one attempt; a waiting TryLock is woken by the release
// message on redisson_lock__channel:{name}, as Redisson's waiters are.
func ExampleMutex_TryLock() {
	c := newClient(redisAddr, lockcore.Options{})
	defer c.Close()
	ctx := context.Background()
	m := c.Mutex("example:trylock")
	a, b := c.NewOwner(), c.NewOwner()

	_ = m.Lock(ctx, a)
	ok, _ := m.TryLock(ctx, b, 0, 0) // one attempt, no wait
	fmt.Println("b while a holds:", ok)

	got := make(chan bool)
	go func() {
		ok, _ := m.TryLock(ctx, b, 10*time.Second, 0) // waits for the release
		got <- ok
	}()
	time.Sleep(50 * time.Millisecond)
	_ = m.Unlock(ctx, a)
	fmt.Println("b after a's release:", <-got)
	_ = m.Unlock(ctx, b)
	// Output:
	// b while a holds: false
	// b after a's release: true
}

// Options set the watchdog: a lock taken without a lease gets Options.LeaseTime and is renewed
// every RenewInterval while held, so it outlives its lease; a lock taken with an explicit lease
// is not renewed and expires with it.
func ExampleOptions() {
	c := newClient(redisAddr, lockcore.Options{LeaseTime: 600 * time.Millisecond, RenewInterval: 100 * time.Millisecond})
	defer c.Close()
	ctx := context.Background()
	owner := c.NewOwner()

	watched := c.Mutex("example:watchdog")
	_ = watched.Lock(ctx, owner)        // lease 600 ms, renewed every 100 ms
	time.Sleep(1200 * time.Millisecond) // two leases
	fmt.Println("watched lock released:", watched.Unlock(ctx, owner))

	leased := c.Mutex("example:lease")
	_ = leased.LockLease(ctx, owner, 200*time.Millisecond) // not renewed
	time.Sleep(600 * time.Millisecond)
	err := leased.Unlock(ctx, owner)
	fmt.Println("leased lock had expired:", errors.Is(err, lockcore.ErrNotOwner))
	// Output:
	// watched lock released: <nil>
	// leased lock had expired: true
}

// A FairMutex grants in arrival order: waiters queue in redisson_lock_queue:{name}, across
// processes, and each release wakes the first of them.
func ExampleFairMutex() {
	c := newClient(redisAddr, lockcore.Options{})
	defer c.Close()
	ctx := context.Background()
	m := c.FairMutex("example:fair", lockcore.FairMutexOptions{})
	first := c.NewOwner()
	_ = m.Lock(ctx, first)

	// Two waiters arrive one after the other; the queue in Redis shows them arrive.
	rdb, _ := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{redisAddr}})
	defer rdb.Close()
	queued := func(n int64) {
		for {
			if l, _ := rdb.Do(ctx, rdb.B().Llen().Key("redisson_lock_queue:{example:fair}").Build()).AsInt64(); l >= n {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	order := make(chan string, 2)
	for i, name := range []string{"second", "third"} {
		go func() {
			owner := c.NewOwner()
			_ = m.Lock(ctx, owner)
			order <- name
			_ = m.Unlock(ctx, owner)
		}()
		queued(int64(i + 1))
	}
	_ = m.Unlock(ctx, first)
	fmt.Println(<-order)
	fmt.Println(<-order)
	// Output:
	// second
	// third
}

// An RWMutex lets readers share and a writer exclude them all.
func ExampleRWMutex() {
	c := newClient(redisAddr, lockcore.Options{})
	defer c.Close()
	ctx := context.Background()
	rw := c.RWMutex("example:rw")
	r1, r2, w := c.NewOwner(), c.NewOwner(), c.NewOwner()

	_ = rw.RLock(ctx, r1)
	ok, _ := rw.TryRLock(ctx, r2, 0, 0)
	fmt.Println("second reader:", ok)
	ok, _ = rw.TryLock(ctx, w, 0, 0)
	fmt.Println("writer while read:", ok)

	_ = rw.RUnlock(ctx, r1)
	_ = rw.RUnlock(ctx, r2)
	ok, _ = rw.TryLock(ctx, w, 0, 0)
	fmt.Println("writer after the readers:", ok)
	_ = rw.Unlock(ctx, w)
	// Output:
	// second reader: true
	// writer while read: false
	// writer after the readers: true
}

// A MultiLock takes several locks all or nothing, in any hash slots, and never deadlocks with
// another MultiLock over an overlapping set.
func ExampleNewMultiLock() {
	c := newClient(redisAddr, lockcore.Options{})
	defer c.Close()
	ctx := context.Background()
	from, to := c.Mutex("example:account:1"), c.Mutex("example:account:2")
	transfer := lockcore.NewMultiLock([]lockcore.Locker{from, to}, lockcore.MultiLockOptions{})
	owner := c.NewOwner()

	if err := transfer.Lock(ctx, owner); err != nil {
		fmt.Println(err)
		return
	}
	ok, _ := to.TryLock(ctx, c.NewOwner(), 0, 0)
	fmt.Println("account 2 to someone else:", ok)
	fmt.Println("released:", transfer.Unlock(ctx, owner))
	// Output:
	// account 2 to someone else: false
	// released: <nil>
}

// A RedLock holds a lock on a quorum (N/2+1) of independent masters, one Client each; the
// lock is valid for its lease less the time taking it took and a clock drift allowance.
func ExampleNewRedLock() {
	var clients []*lockcore.Client
	for _, addr := range masterAddrs { // three independent redis-servers
		c := newClient(addr, lockcore.Options{})
		defer c.Close()
		clients = append(clients, c)
	}
	ctx := context.Background()
	r := lockcore.NewRedLock(clients, "example:redlock", lockcore.RedLockOptions{})
	owner := r.NewOwner()

	validity, err := r.LockLease(ctx, owner, 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("quorum:", r.Quorum(), "of", len(clients))
	fmt.Println("valid for a while, under the lease:", validity > 0 && validity < 10*time.Second)
	fmt.Println("released:", r.Unlock(ctx, owner))
	// Output:
	// quorum: 2 of 3
	// valid for a while, under the lease: true
	// released: <nil>
}

// A FencedMutex returns a token with every grant, greater than every earlier one: a protected
// resource that remembers the highest token it has seen can refuse a holder whose lease ran out
// while it was paused.
func ExampleFencedMutex() {
	c := newClient(redisAddr, lockcore.Options{})
	defer c.Close()
	ctx := context.Background()
	f := c.FencedMutex("example:fenced")

	a := c.NewOwner()
	first, _ := f.Lock(ctx, a)
	_ = f.Unlock(ctx, a)
	b := c.NewOwner()
	second, _ := f.Lock(ctx, b)
	_ = f.Unlock(ctx, b)

	highest := second // what the storage has seen
	fmt.Println("later grant, greater token:", second > first)
	fmt.Println("storage refuses the first holder's write:", first < highest)
	// Output:
	// later grant, greater token: true
	// storage refuses the first holder's write: true
}
