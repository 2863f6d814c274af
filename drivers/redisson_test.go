package drivers_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/lockcore"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// inspect returns a plain go-redis client on addr for checking what a driver left in Redis.
func inspect(t *testing.T, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// TestRedissonProtocol checks the key layout, reentrancy, replies and the unlock message of
// the Redisson driver against Redis itself.
func TestRedissonProtocol(t *testing.T) {
	cfg := single(t)
	l := openWith(t, "redisson", cfg)
	rdb := inspect(t, cfg.Addrs[0])
	ctx := context.Background()
	w := l.NewWorker()
	const name = "rp:orders"

	for range 2 {
		if err := w.Lock(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	fields, err := rdb.HGetAll(ctx, name).Result()
	if err != nil || len(fields) != 1 {
		t.Fatalf("lock hash = %v, %v; want one owner field", fields, err)
	}
	var field string
	for f, n := range fields {
		field = f
		if n != "2" {
			t.Errorf("hold count %q after two Locks, want 2", n)
		}
	}
	// "<client UUID>:<owner id>", as Redisson's "<UUID>:<threadId>".
	id, owner, ok := strings.Cut(field, ":")
	if _, err := strconv.ParseUint(owner, 10, 64); !ok || len(id) != 36 || err != nil {
		t.Errorf("owner field %q is not <uuid>:<n>", field)
	}
	if pttl := rdb.PTTL(ctx, name).Val(); pttl <= 0 || pttl > drivers.RedissonDefaultLease {
		t.Errorf("PTTL %v, want within the default lease %v", pttl, drivers.RedissonDefaultLease)
	}

	sub := rdb.Subscribe(ctx, "redisson_lock__channel:{"+name+"}")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscription confirmation
		t.Fatal(err)
	}
	if err := w.Unlock(ctx, name); err != nil {
		t.Fatal(err)
	}
	if n := rdb.HGet(ctx, name, field).Val(); n != "1" {
		t.Errorf("hold count %q after one Unlock, want 1", n)
	}
	if err := w.Unlock(ctx, name); err != nil {
		t.Fatal(err)
	}
	if rdb.Exists(ctx, name).Val() != 0 {
		t.Error("lock key left after the last Unlock")
	}
	mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	msg, err := sub.ReceiveMessage(mctx)
	if err != nil || msg.Payload != "0" {
		t.Fatalf("unlock message = %v, %v; want \"0\"", msg, err)
	}
	if err := w.Unlock(ctx, name); !errors.Is(err, drivers.ErrNotHeld) {
		t.Fatalf("third Unlock = %v, want ErrNotHeld", err)
	}
}

// TestRedissonLockcoreInterop checks that the Redisson driver and lockcore speak one protocol:
// each excludes the other, refuses to unlock the other's lock, and is woken by the other's
// unlock message.
func TestRedissonLockcoreInterop(t *testing.T) {
	cfg := single(t)
	l := openWith(t, "redisson", cfg)
	c, err := lockcore.New(lockcore.Options{Redis: rueidis.ClientOption{InitAddress: cfg.Addrs, ForceSingleClient: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	owner := c.NewOwner()
	w := l.NewWorker()

	// lockcore holds: the Redisson driver can neither take nor release it.
	lc := c.Mutex("io:a")
	if err := lc.Lock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = w.Lock(short, "io:a")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("redisson Lock of a lockcore-held lock = %v, want DeadlineExceeded", err)
	}
	if err := w.Unlock(ctx, "io:a"); !errors.Is(err, drivers.ErrNotHeld) {
		t.Fatalf("redisson Unlock of a lockcore-held lock = %v, want ErrNotHeld", err)
	}

	// lockcore's release wakes the waiting Redisson driver long before the 30 s lease could.
	got := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		got <- w.Lock(wctx, "io:a")
	}()
	time.Sleep(50 * time.Millisecond)
	if err := lc.Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("redisson waiter after lockcore's unlock: %v", err)
	}

	// Now the Redisson driver holds: lockcore can neither take nor release it.
	if ok, err := lc.TryLock(ctx, owner, 0, 0); ok || err != nil {
		t.Fatalf("lockcore TryLock of a redisson-held lock = %v, %v; want false", ok, err)
	}
	if err := lc.Unlock(ctx, owner); !errors.Is(err, lockcore.ErrNotOwner) {
		t.Fatalf("lockcore Unlock of a redisson-held lock = %v, want ErrNotOwner", err)
	}
	// And the Redisson driver's release wakes a waiting lockcore owner.
	lgot := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		lgot <- lc.Lock(wctx, owner)
	}()
	time.Sleep(50 * time.Millisecond)
	if err := w.Unlock(ctx, "io:a"); err != nil {
		t.Fatal(err)
	}
	if err := <-lgot; err != nil {
		t.Fatalf("lockcore waiter after redisson's unlock: %v", err)
	}
	if err := lc.Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
}

// TestRedissonWatchdog checks that locks taken without a lease are renewed until unlocked, and
// that renewal stops with Close: before 3.44 (3.23) by one renewal script per lock, from 3.44
// (3.52) by one script for every held lock of a slot.
func TestRedissonWatchdog(t *testing.T) {
	for _, version := range []string{"3.23", "3.52"} {
		t.Run(version, func(t *testing.T) { redissonWatchdog(t, version) })
	}
}

func redissonWatchdog(t *testing.T, version string) {
	const timeout = 300 * time.Millisecond
	cfg := single(t)
	d, err := drivers.RedissonDriver{WatchdogTimeout: timeout}.Configure("redisson:version="+version, map[string]string{"version": version})
	if err != nil {
		t.Fatal(err)
	}
	l := openDriver(t, d, cfg)
	renewed := l.(drivers.RenewalCounter)
	rdb := inspect(t, cfg.Addrs[0])
	ctx := context.Background()
	w := l.NewWorker()
	names := []string{"{wd}:a", "{wd}:b"} // one slot: a batch renews both
	for _, n := range names {
		if err := w.Lock(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	// MONITOR from here on sees only renewals until the unlocks: how many keys each script
	// carried shows the batching, whatever a loaded machine did to the timing (a ratio of
	// server-side script calls to renewals once failed in CI: a NOSCRIPT retry, a renewal that
	// timed out on the client but ran on the server, and one in flight at the unlock).
	mon := startMonitor(t, cfg.Addrs[0])
	renewalsBefore := renewed.Renewals()
	time.Sleep(4 * timeout) // the leases would have run out three times over
	for _, n := range names {
		if pttl := rdb.PTTL(ctx, n).Val(); pttl <= 0 {
			t.Fatalf("%s: PTTL %v after %v held with a %v lease: not renewed", n, pttl, 4*timeout, timeout)
		}
	}
	numkeys := renewalScripts(mon.snapshot())
	renewals := renewed.Renewals() - renewalsBefore
	for _, n := range names {
		if err := w.Unlock(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	// Renewed every timeout/3: about 12 per lock here. Slow test machines fire fewer ticks;
	// fewer than 2 per lock would mean the leases were not kept.
	if renewals < 2*int64(len(names)) {
		t.Errorf("%d renewals of %d locks in %v", renewals, len(names), 4*timeout)
	}
	perScript := 1 // 3.23: one script per lock renewed
	if version == "3.52" {
		perScript = len(names) // one script for both
	}
	if len(numkeys) < 2 {
		t.Fatalf("MONITOR saw %d renewal scripts in %v, want several", len(numkeys), 4*timeout)
	}
	for _, n := range numkeys {
		if n != perScript {
			t.Fatalf("renewal scripts' key counts %v, want %d each", numkeys, perScript)
		}
	}
	// Held through Close: no longer renewed, it expires with its lease.
	if err := w.Lock(ctx, "wd:c"); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * timeout)
	for rdb.Exists(ctx, "wd:c").Val() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("lock held at Close was still renewed after Close")
		}
		time.Sleep(timeout / 3)
	}
}

// TestRedissonExplicitLease checks that a lock taken with the run's lease is not renewed.
func TestRedissonExplicitLease(t *testing.T) {
	cfg := single(t)
	cfg.Lease = 200 * time.Millisecond
	l := openWith(t, "redisson", cfg)
	rdb := inspect(t, cfg.Addrs[0])
	ctx := context.Background()
	w := l.NewWorker()
	if err := w.Lock(ctx, "el:a"); err != nil {
		t.Fatal(err)
	}
	if pttl := rdb.PTTL(ctx, "el:a").Val(); pttl <= 0 || pttl > cfg.Lease {
		t.Fatalf("PTTL %v, want within the lease %v", pttl, cfg.Lease)
	}
	time.Sleep(3 * cfg.Lease)
	if rdb.Exists(ctx, "el:a").Val() != 0 {
		t.Fatal("lock with an explicit lease outlived it")
	}
	if err := w.Unlock(ctx, "el:a"); !errors.Is(err, drivers.ErrNotHeld) {
		t.Fatalf("Unlock after the lease ran out = %v, want ErrNotHeld", err)
	}
}
