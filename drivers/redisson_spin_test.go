package drivers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// TestRedissonSpinPolls checks RSpinLock's waiting (RedissonSpinLock.lock at redisson-4.7.0): a
// waiter sends lock scripts between back-off sleeps, never subscribes, and the release publishes
// nothing; it then gets the lock.
func TestRedissonSpinPolls(t *testing.T) {
	cfg := single(t)
	cfg.Concurrency = 2
	l := openWith(t, "redisson-spin", cfg)
	a, b := l.NewWorker(), l.NewWorker()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const name = "sp:k"
	must(t, a.Lock(ctx, name))
	mon := startMonitor(t, cfg.Addrs[0])
	done := make(chan error, 1)
	go func() { done <- b.Lock(ctx, name) }()
	attempts := func(lines []monitorLine) int {
		n := 0
		for _, l := range lines {
			if l.client == "lua" && len(l.args) == 2 && strings.EqualFold(l.args[0], "exists") && l.args[1] == name {
				n++
			}
		}
		return n
	}
	mon.waitFor(t, "five attempts by the waiter", func(lines []monitorLine) bool { return attempts(lines) >= 5 })
	select {
	case err := <-done:
		t.Fatalf("the waiter's Lock returned %v while the lock was held", err)
	default:
	}
	must(t, a.Unlock(ctx, name))
	must(t, <-done)
	must(t, b.Unlock(ctx, name))
	for _, line := range mon.snapshot() {
		if cmd := strings.ToLower(line.args[0]); strings.Contains(cmd, "subscribe") || strings.Contains(cmd, "publish") {
			t.Errorf("spin lock sent %v: its waiters poll, its releases publish nothing", line.args)
		}
	}
	if c := l.(drivers.CountingLocker).Counters(); c.FailedAttempts < 5 {
		t.Errorf("counters %+v: want the waiter's failed attempts counted", c)
	}
}

// TestRedissonSpinBackOff checks the sleeps of Redisson's default ExponentialBackOff policy.
func TestRedissonSpinBackOff(t *testing.T) {
	got := drivers.RedissonSpinSleeps(12)
	if got[0] != time.Millisecond {
		t.Errorf("first sleep %v, want 1ms", got[0])
	}
	for i := 1; i < len(got); i++ {
		prev, d := got[i-1], got[i]
		if prev == 128*time.Millisecond {
			if d != prev {
				t.Errorf("sleep %d = %v after the 128ms cap", i, d)
			}
			continue
		}
		lo, hi := min(2*prev, 128*time.Millisecond), min(2*prev+time.Duration(i-1)*time.Millisecond, 128*time.Millisecond)
		if d < lo || d > hi {
			t.Errorf("sleep %d = %v after %v, want %v…%v", i, d, prev, lo, hi)
		}
	}
	if last := got[len(got)-1]; last != 128*time.Millisecond {
		t.Errorf("sleeps %v never reach the 128ms cap", got)
	}
}
