package drivers

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/go-redis/v9"
)

// TestRedissonSubsSemaphoreForEveryWaiter checks that later waiters and non-last leavers of a
// channel also take its semaphore (PublishSubscribe.subscribe/unsubscribe, every tag read): with
// the semaphore held by another channel's first subscribe, whose confirmation a paused server
// delays, a second waiter on an already subscribed channel sharing that semaphore cannot join
// within its wait, and a waiter leaving it is not counted out until the semaphore is free.
func TestRedissonSubsSemaphoreForEveryWaiter(t *testing.T) {
	addr := redistest.NewServer(t).Addrs()[0]
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	s := newRedissonSubs(rdb, false, redissonSubsLimits{perConn: 5, maxConns: 50, timeout: 10 * time.Second})
	defer s.close()
	ctx := context.Background()

	x := "sem:x"
	y := ""
	for i := 0; y == ""; i++ {
		if c := "sem:y" + strconv.Itoa(i); s.lock(c) == s.lock(x) {
			y = c
		}
	}
	ex, err := s.subscribe(ctx, x, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	<-ex.done
	if ex.err != nil {
		t.Fatal(ex.err)
	}
	ex2, err := s.subscribe(ctx, x, time.Time{}) // a second waiter, while the semaphore is free
	if err != nil {
		t.Fatal(err)
	}

	if err := admin.Do(ctx, "client", "pause", 1500, "all").Err(); err != nil {
		t.Fatal(err)
	}
	ey, err := s.subscribe(ctx, y, time.Time{}) // holds the semaphore until Redis confirms
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.subscribe(ctx, x, time.Now().Add(200*time.Millisecond)); !errors.Is(err, errRedissonWaitOver) {
		t.Errorf("a later waiter of %s joined while %s's subscribe held their semaphore: %v", x, y, err)
	}
	s.unsubscribe(ex2) // not the last: it too waits for the semaphore
	time.Sleep(100 * time.Millisecond)
	s.mu.Lock()
	refs := ex.refs
	s.mu.Unlock()
	if refs != 2 {
		t.Errorf("%s has %d waiters while its semaphore is held, want 2: the leaver did not wait for it", x, refs)
	}
	<-ey.done
	if ey.err != nil {
		t.Fatal(ey.err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		refs = ex.refs
		s.mu.Unlock()
		if refs == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still has %d waiters after the semaphore was freed", x, refs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.unsubscribe(ex)
	s.unsubscribe(ey)
}

// TestRedissonSubsFailedEntryLeaves checks that a subscribe that failed leaves the channel's
// entries at once (PublishSubscribe.subscribe removes it on failure): a waiter arriving while the
// failed one's waiter still holds it starts, and gets, a subscription of its own.
func TestRedissonSubsFailedEntryLeaves(t *testing.T) {
	addr := redistest.NewServer(t).Addrs()[0]
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	s := newRedissonSubs(rdb, false, redissonSubsLimits{perConn: 5, maxConns: 50, timeout: 200 * time.Millisecond})
	defer s.close()
	ctx := context.Background()
	// Paused for longer than the subscribe timeout with room for a loaded machine to start the
	// subscribe late (under the 3 s reply timeout, which would fail it otherwise; a CI run under
	// load started it more than 1.3 s late at a 1.5 s pause and it succeeded), and resumed as
	// soon as it has failed.
	if err := admin.Do(ctx, "client", "pause", 2500, "all").Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.Do(context.Background(), "client", "unpause")
	failed, err := s.subscribe(ctx, "fe:x", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	<-failed.done
	if !errors.Is(failed.err, ErrRedissonSubscribeTimeout) {
		t.Fatalf("subscribe on a paused server: %v, want a subscribe timeout", failed.err)
	}
	if err := admin.Do(ctx, "client", "unpause").Err(); err != nil {
		t.Fatal(err)
	}
	// The paused server may still hold the first SUBSCRIBE; the second waits for it to resume.
	var next *redissonEntry
	deadline := time.Now().Add(10 * time.Second)
	for {
		next, err = s.subscribe(ctx, "fe:x", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		<-next.done
		if next.err == nil || time.Now().After(deadline) {
			break
		}
		s.unsubscribe(next) // timed out behind the pause too: try again
	}
	if next == failed {
		t.Fatal("the second waiter joined the failed subscription")
	}
	if next.err != nil {
		t.Fatalf("second subscribe: %v", next.err)
	}
	s.unsubscribe(failed)
	s.unsubscribe(next)
}
