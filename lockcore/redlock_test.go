package lockcore

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

// redEnv is N independent masters, a lockcore Client on each and a direct connection to each
// for inspection.
type redEnv struct {
	masters *compose.Masters
	addrs   []string
	clients []*Client
	direct  []rueidis.Client
}

func newRedEnv(t *testing.T, n int) *redEnv {
	t.Helper()
	m := redistest.NewMasters(t, n)
	r := &redEnv{masters: m, addrs: m.Addrs()}
	for _, addr := range r.addrs {
		c, err := New(Options{Redis: rueidis.ClientOption{InitAddress: []string{addr}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		r.clients = append(r.clients, c)
		d, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Close)
		r.direct = append(r.direct, d)
	}
	return r
}

// kill stops master i for good.
func (r *redEnv) kill(t *testing.T, i int) {
	t.Helper()
	if err := r.masters.Kill(r.addrs[i]); err != nil {
		t.Fatal(err)
	}
}

// keys returns the keys on master i.
func (r *redEnv) keys(t *testing.T, i int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	keys, err := r.direct[i].Do(ctx, r.direct[i].B().Keys().Pattern("*").Build()).AsStrSlice()
	if err != nil {
		t.Fatalf("KEYS on master %d: %v", i, err)
	}
	return keys
}

// assertNoKeys fails if any of the masters at idx holds a key.
func (r *redEnv) assertNoKeys(t *testing.T, idx ...int) {
	t.Helper()
	for _, i := range idx {
		if keys := r.keys(t, i); len(keys) != 0 {
			t.Errorf("keys left on master %d: %v", i, keys)
		}
	}
}

// held counts the live masters among idx on which name exists.
func (r *redEnv) held(t *testing.T, name string, idx ...int) int {
	t.Helper()
	n := 0
	for _, i := range idx {
		for _, k := range r.keys(t, i) {
			if k == name {
				n++
			}
		}
	}
	return n
}

func TestRedLockQuorumWithTwoOfFiveDown(t *testing.T) {
	t.Parallel() // masters of its own; mostly waiting on dead and stalled ones
	r := newRedEnv(t, 5)
	ctx := ctxT(t, 20*time.Second)
	rl := NewRedLock(r.clients, "red", RedLockOptions{})
	if rl.Quorum() != 3 {
		t.Fatalf("quorum %d of 5", rl.Quorum())
	}
	r.kill(t, 1)
	r.kill(t, 3)
	live := []int{0, 2, 4}

	owner := rl.NewOwner()
	const lease = 5 * time.Second
	validity, granted, err := rl.TryLockValidity(ctx, owner, 0, lease)
	if err != nil || validity <= 0 {
		t.Fatalf("TryLockValidity with 3 of 5 up = %v, %d, %v; want granted", validity, granted, err)
	}
	if granted != 3 {
		t.Fatalf("granted on %d masters, want the 3 live ones", granted)
	}
	if maxValid := lease - lease/100 - 2*time.Millisecond; validity > maxValid {
		t.Fatalf("validity %v above lease − drift %v", validity, maxValid)
	}
	if n := r.held(t, "red", live...); n != 3 {
		t.Fatalf("lock key on %d live masters, want 3", n)
	}
	// A contender loses: that is a result, not an error.
	if ok, err := rl.TryLock(ctx, rl.NewOwner(), 0, lease); ok || err != nil {
		t.Fatalf("contender TryLock = %v, %v; want false, nil", ok, err)
	}
	if err := rl.Unlock(ctx, rl.NewOwner()); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("non-owner Unlock = %v, want ErrNotOwner", err)
	}
	if n := r.held(t, "red", live...); n != 3 {
		t.Fatalf("lock key on %d live masters after a non-owner unlock, want 3", n)
	}
	if err := rl.Unlock(ctx, owner); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	r.assertNoKeys(t, live...)

	// Lease 0: each master's hold is renewed by its Client's watchdog.
	if err := rl.Lock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	for _, i := range live {
		ttl, err := r.direct[i].Do(ctx, r.direct[i].B().Pttl().Key("red").Build()).AsInt64()
		if err != nil || ttl <= 20000 {
			t.Fatalf("master %d PTTL %d, %v; want the 30 s watchdog lease", i, ttl, err)
		}
	}
	if err := rl.Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	r.assertNoKeys(t, live...)
}

func TestRedLockNoQuorumWithThreeOfFiveDown(t *testing.T) {
	t.Parallel() // masters of its own; mostly waiting on dead and stalled ones
	r := newRedEnv(t, 5)
	ctx := ctxT(t, 20*time.Second)
	rl := NewRedLock(r.clients, "red", RedLockOptions{})
	for _, i := range []int{0, 2, 3} {
		r.kill(t, i)
	}
	live := []int{1, 4}
	owner := rl.NewOwner()
	start := time.Now()
	ok, err := rl.TryLock(ctx, owner, 0, 5*time.Second)
	if ok || !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("TryLock with 2 of 5 up = %v, %v; want false, ErrNoQuorum", ok, err)
	}
	// A waiting attempt gives up when its wait runs out, not later.
	ok, err = rl.TryLock(ctx, owner, 500*time.Millisecond, 5*time.Second)
	if ok || !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("TryLock with wait, 2 of 5 up = %v, %v; want false, ErrNoQuorum", ok, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("two failed attempts took %v", d)
	}
	lctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = rl.Lock(lctx, owner)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock with 2 of 5 up = %v, want DeadlineExceeded", err)
	}
	// The live masters granted every attempt; the failed attempts released them.
	r.assertNoKeys(t, live...)
}

func TestRedLockFailedAttemptReleasesEverywhere(t *testing.T) {
	t.Parallel() // masters of its own; mostly waiting on dead and stalled ones
	r := newRedEnv(t, 5)
	ctx := ctxT(t, 20*time.Second)
	rl := NewRedLock(r.clients, "red", RedLockOptions{})
	// Someone holds the plain lock on masters 0–2: an attempt is granted on 3 and 4 only.
	other := r.clients[0].NewOwner()
	for i := range 3 {
		if err := r.clients[i].Mutex("red").Lock(ctx, other); err != nil {
			t.Fatal(err)
		}
	}
	owner := rl.NewOwner()
	v, granted, err := rl.TryLockValidity(ctx, owner, 0, 5*time.Second)
	if v != 0 || err != nil {
		t.Fatalf("TryLockValidity against a majority holder = %v, %v", v, err)
	}
	if granted > 2 {
		t.Fatalf("granted on %d masters; only 2 were free", granted)
	}
	r.assertNoKeys(t, 3, 4)
	if ok, err := rl.TryLock(ctx, owner, 300*time.Millisecond, 5*time.Second); ok || err != nil {
		t.Fatalf("TryLock with wait = %v, %v", ok, err)
	}
	r.assertNoKeys(t, 3, 4)
	for i := range 3 {
		if err := r.clients[i].Mutex("red").Unlock(ctx, other); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := rl.TryLock(ctx, owner, 0, 5*time.Second); !ok || err != nil {
		t.Fatalf("TryLock once free = %v, %v", ok, err)
	}
	if err := rl.Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	r.assertNoKeys(t, 0, 1, 2, 3, 4)
}

// A stalled master (SIGSTOP) must cost an attempt no more than the node timeout.
func TestRedLockStalledMasterCostsBoundedTime(t *testing.T) {
	t.Parallel() // masters of its own; mostly waiting on dead and stalled ones
	r := newRedEnv(t, 5)
	ctx := ctxT(t, 30*time.Second)
	rl := NewRedLock(r.clients, "red", RedLockOptions{NodeTimeout: 300 * time.Millisecond})
	owner := rl.NewOwner()
	// Connect to every master first, so the stall hits a request, not a dial.
	if ok, err := rl.TryLock(ctx, owner, 0, 5*time.Second); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	if err := rl.Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	pid := r.masters.Pid(r.addrs[2])
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(resume)
	start := time.Now()
	v, granted, err := rl.TryLockValidity(ctx, owner, 0, 5*time.Second)
	took := time.Since(start)
	if v <= 0 || err != nil {
		t.Fatalf("TryLockValidity with one master stalled = %v, %v", v, err)
	}
	if granted != 4 {
		t.Fatalf("granted on %d masters, want the 4 running", granted)
	}
	if took > 2*time.Second {
		t.Fatalf("attempt took %v with a 300ms node timeout", took)
	}
	if err := rl.Unlock(ctx, owner); err != nil {
		t.Fatalf("Unlock with one master stalled: %v", err)
	}
	r.assertNoKeys(t, 0, 1, 3, 4)
	// Once it runs again, the stalled master serves the queued lock and then its release.
	resume()
	waitFor(t, func() bool { return len(r.keys(t, 2)) == 0 })
}
