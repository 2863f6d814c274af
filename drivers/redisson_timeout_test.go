package drivers

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/go-redis/v9"
)

// TestIsReplyTimeout checks the test the 4.7 profile's tryLock uses for Redisson's
// RedisResponseTimeoutException: a command unanswered within the client's read timeout (a server
// paused with CLIENT PAUSE) is one; the caller's context running out is not.
func TestIsReplyTimeout(t *testing.T) {
	addr := redistest.NewServer(t).Addrs()[0]
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: 100 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "client", "pause", 1000, "all").Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.Do(ctx, "client", "unpause")
	err := rdb.Get(ctx, "k").Err()
	if !isReplyTimeout(err) {
		t.Errorf("isReplyTimeout(%v) = false for a paused server", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	slow := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: -1, MaxRetries: -1})
	defer slow.Close()
	err = slow.Get(cctx, "k").Err()
	if err == nil || isReplyTimeout(err) {
		t.Errorf("isReplyTimeout(%v) = true for the caller's context ending", err)
	}
}
