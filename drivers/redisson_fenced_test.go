package drivers_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// TestRedissonFencedTokens checks RFencedLock (RedissonFencedLock at redisson-4.7.0): every grant
// — lockAndGetToken, a reentrant one, lock() — increments redisson_lock_token:{name}, and the
// driver shares that sequence with lockcore-fenced, so grants alternating between the two get
// rising tokens; a waiter blocked on the lock gets it, with a higher token, once it is released.
func TestRedissonFencedTokens(t *testing.T) {
	cfg := single(t)
	cfg.Needs = drivers.KindFenced
	rl := openWith(t, "redisson-fenced", cfg)
	ll := openWith(t, "lockcore-fenced", cfg)
	r, r2 := newAs[drivers.FencedWorker](t, rl), newAs[drivers.FencedWorker](t, rl)
	lc := newAs[drivers.FencedWorker](t, ll)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const name = "rf:k"
	var last int64
	grant := func(w drivers.FencedWorker) int64 {
		t.Helper()
		tok, err := w.LockFenced(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if tok <= last {
			t.Fatalf("token %d after %d", tok, last)
		}
		last = tok
		return tok
	}
	for i := range 6 {
		w := r
		if i%2 == 1 {
			w = lc
		}
		grant(w)
		must(t, w.Unlock(ctx, name))
	}
	grant(r)
	grant(r) // reentrant: a token of its own
	must(t, r.Unlock(ctx, name))
	must(t, r.Unlock(ctx, name))

	must(t, r.Lock(ctx, name)) // lock(): counted, not returned
	last++
	done := make(chan int64, 1)
	go func() {
		tok, err := r2.LockFenced(ctx, name)
		if err != nil {
			t.Error(err)
		}
		done <- tok
	}()
	time.Sleep(50 * time.Millisecond) // let the waiter queue; the test holds either way
	must(t, r.Unlock(ctx, name))
	if tok := <-done; tok <= last {
		t.Fatalf("waiter's token %d after %d", tok, last)
	}
	must(t, r2.Unlock(ctx, name))
	got, err := inspect(t, cfg.Addrs[0]).Get(ctx, "redisson_lock_token:{"+name+"}").Int64()
	if err != nil || got != last+1 {
		t.Fatalf("token counter %d, %v; want %d, one per grant", got, err, last+1)
	}
}
