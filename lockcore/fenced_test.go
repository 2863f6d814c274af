package lockcore

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// dropTokens deletes the token counters of fenced locks: they persist by design, and a test
// removes them before checking that it left Redis clean.
func dropTokens(t testing.TB, e *testEnv, locks ...*FencedMutex) {
	t.Helper()
	for _, f := range locks {
		e.do(t, "DEL", f.TokenKey())
	}
}

func TestFencedTokensStrictlyIncrease(t *testing.T) {
	t.Parallel() // a server of its own; 10016 grants with no timing bound, so it can share the CPU
	testFencedTokensStrictlyIncrease(t, newEnv(t))
}

// testFencedTokensStrictlyIncrease makes 32 goroutines on four clients take four fenced locks
// 313 times each, 10016 grants, and checks per lock that the tokens, in grant order, strictly
// increase, never repeat, and end at the counter's value.
func testFencedTokensStrictlyIncrease(t *testing.T, e *testEnv) {
	clients := []*Client{e.client(t, Options{}), e.client(t, Options{}), e.client(t, Options{}), e.client(t, Options{})}
	ctx := ctxT(t, 120*time.Second)
	const workers, rounds, names = 32, 313, 4
	// Per lock, in grant order: appended while holding the lock. The mutex is for the race
	// detector, which cannot see the happens-before a Redis lock hand-off gives.
	var tokens [names][]int64
	var tokensMu [names]sync.Mutex
	var holders [names]atomic.Int32
	var violations atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[w%len(clients)]
			o := c.NewOwner()
			for i := range rounds {
				k := (w + i) % names
				f := c.FencedMutex(fmt.Sprintf("fenced:%d", k))
				tok, err := f.Lock(ctx, o)
				if err != nil {
					t.Error(err)
					return
				}
				if holders[k].Add(1) != 1 {
					violations.Add(1)
				}
				tokensMu[k].Lock()
				tokens[k] = append(tokens[k], tok)
				tokensMu[k].Unlock()
				holders[k].Add(-1)
				if err := f.Unlock(ctx, o); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d mutual exclusion violations", v)
	}
	total := 0
	for k := range names {
		f := clients[0].FencedMutex(fmt.Sprintf("fenced:%d", k))
		seen := make(map[int64]bool, len(tokens[k]))
		for i, tok := range tokens[k] {
			if seen[tok] {
				t.Fatalf("%s: token %d granted twice", f.Name(), tok)
			}
			seen[tok] = true
			if i > 0 && tok <= tokens[k][i-1] {
				t.Fatalf("%s: grant %d got token %d after %d", f.Name(), i, tok, tokens[k][i-1])
			}
		}
		last, err := f.Token(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(tokens[k]); last != tokens[k][n-1] || last != int64(n) {
			t.Fatalf("%s: counter %d after %d grants ending at token %d", f.Name(), last, n, tokens[k][n-1])
		}
		total += len(tokens[k])
		dropTokens(t, e, f)
	}
	if total != workers*rounds {
		t.Fatalf("%d grants, want %d", total, workers*rounds)
	}
	e.assertNoKeys(t)
}

func TestFencedReentryAndLayout(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testFencedReentryAndLayout(t, newEnv(t))
}

// testFencedReentryAndLayout checks Redisson's key layout and its reentrancy rule: a nested
// grant takes a new, greater token.
func testFencedReentryAndLayout(t *testing.T, e *testEnv) {
	c := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	f := c.FencedMutex("fenced:re")
	if f.TokenKey() != "redisson_lock_token:{fenced:re}" {
		t.Fatalf("token key %q", f.TokenKey())
	}
	if tok, err := f.Token(ctx); err != nil || tok != 0 {
		t.Fatalf("token of a lock never taken = %d, %v", tok, err)
	}
	o, other := c.NewOwner(), c.NewOwner()
	t1, err := f.Lock(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := f.Lock(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if t1 != 1 || t2 != 2 {
		t.Fatalf("tokens %d then %d on reentry; want 1 then 2, as Redisson", t1, t2)
	}
	if n, ok := f.HeldBy(o); !ok || n != 2 {
		t.Fatalf("HeldBy = %d, %v; want 2", n, ok)
	}
	if got := e.int(t, "HGET", "fenced:re", o.Field()); got != 2 {
		t.Fatalf("hold count %d, want 2", got)
	}
	if ttl := e.int(t, "PTTL", f.TokenKey()); ttl != -1 {
		t.Fatalf("token counter PTTL %d; it must persist", ttl)
	}
	if tok, ok, err := f.TryLock(ctx, other, 0, 0); err != nil || ok || tok != 0 {
		t.Fatalf("TryLock on a held lock = %d, %v, %v", tok, ok, err)
	}
	if tok, ok, err := f.TryLock(ctx, other, 100*time.Millisecond, 0); err != nil || ok || tok != 0 {
		t.Fatalf("TryLock with wait on a held lock = %d, %v, %v", tok, ok, err)
	}
	for range 2 {
		if err := f.Unlock(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if e.int(t, "EXISTS", "fenced:re") != 0 {
		t.Fatal("lock still exists after the last unlock")
	}
	t3, ok, err := f.TryLock(ctx, other, 0, time.Second)
	if err != nil || !ok || t3 != 3 {
		t.Fatalf("TryLock after release = %d, %v, %v; want token 3", t3, ok, err)
	}
	if pttl := e.int(t, "PTTL", "fenced:re"); pttl <= 0 || pttl > 1000 {
		t.Fatalf("PTTL %d for a 1 s lease", pttl)
	}
	if err := f.Unlock(ctx, other); err != nil {
		t.Fatal(err)
	}
	if tok, err := f.Token(ctx); err != nil || tok != 3 {
		t.Fatalf("Token = %d, %v; want 3", tok, err)
	}
	dropTokens(t, e, f)
	e.assertNoKeys(t)
}

func TestFencedUnlockByNonOwner(t *testing.T) {
	t.Parallel() // a server of its own; mostly waiting on leases and wake-ups
	testFencedUnlockByNonOwner(t, newEnv(t))
}

func testFencedUnlockByNonOwner(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 10*time.Second)
	const name = "fenced:nu"
	owner := a.NewOwner()
	if _, err := a.FencedMutex(name).Lock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		f     *FencedMutex
		owner Owner
	}{
		{"other owner of the same client", a.FencedMutex(name), a.NewOwner()},
		{"owner of another client", b.FencedMutex(name), b.NewOwner()},
		{"another client using the same owner id", b.FencedMutex(name), b.OwnerWithID(1)},
	}
	for _, tc := range cases {
		if err := tc.f.Unlock(ctx, tc.owner); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s: Unlock = %v, want ErrNotOwner", tc.name, err)
		}
	}
	if _, err := a.FencedMutex(name).Lock(ctx, Owner{}); !errors.Is(err, ErrNoOwner) {
		t.Errorf("zero owner: Lock = %v, want ErrNoOwner", err)
	}
	if e.int(t, "EXISTS", name) != 1 {
		t.Fatal("a non-owner unlock released the lock")
	}
	if err := a.FencedMutex(name).Unlock(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if err := a.FencedMutex(name).Unlock(ctx, owner); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("unlock of a free lock = %v, want ErrNotOwner", err)
	}
	dropTokens(t, e, a.FencedMutex(name))
	e.assertNoKeys(t)
}

func TestFencedExcludesMutexAndWakesOnItsRelease(t *testing.T) {
	testFencedExcludesMutexAndWakesOnItsRelease(t, newEnv(t))
}

// testFencedExcludesMutexAndWakesOnItsRelease checks that a fenced lock is the reentrant lock's
// hash and channel: a Mutex holder excludes it, and its release wakes a fenced waiter long
// before the 30 s lease would.
func testFencedExcludesMutexAndWakesOnItsRelease(t *testing.T, e *testEnv) {
	a := e.client(t, Options{})
	b := e.client(t, Options{})
	ctx := ctxT(t, 20*time.Second)
	const name = "fenced:mx"
	ao := a.NewOwner()
	if err := a.Mutex(name).Lock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	f := b.FencedMutex(name)
	bo := b.NewOwner()
	type grant struct {
		tok int64
		ok  bool
		err error
		at  time.Time
	}
	got := make(chan grant, 1)
	go func() {
		tok, ok, err := f.TryLock(ctx, bo, 15*time.Second, 0)
		got <- grant{tok, ok, err, time.Now()}
	}()
	waitFor(t, func() bool { return e.numsub(t, channelName(name)) == 1 })
	released := time.Now()
	if err := a.Mutex(name).Unlock(ctx, ao); err != nil {
		t.Fatal(err)
	}
	g := <-got
	if g.err != nil || !g.ok || g.tok != 1 {
		t.Fatalf("fenced TryLock = %d, %v, %v", g.tok, g.ok, g.err)
	}
	if d := g.at.Sub(released); d > 5*time.Second {
		t.Fatalf("fenced waiter took %v after the release; the unlock message was missed", d)
	}
	if ok, err := a.Mutex(name).TryLock(ctx, ao, 0, 0); err != nil || ok {
		t.Fatalf("Mutex TryLock on a held fenced lock = %v, %v", ok, err)
	}
	if err := f.Unlock(ctx, bo); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return e.numsub(t, channelName(name)) == 0 })
	dropTokens(t, e, f)
	e.assertNoKeys(t)
}
