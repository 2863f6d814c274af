package drivers_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// TestRedissonGoneLock checks what each profile answers when the lock was deleted under its
// holder, and what unlock latches stay behind: RedissonFairLock answers a missing lock as
// released, RedissonReadLock as not held but with its latch set to 1 (3.24+); the latch keys of
// 3.52 stay until their PX (its DEL names the client id's latch), 4.7's are deleted at once
// (RedissonBaseLock.unlockInnerAsync, 4.3.0+).
func TestRedissonGoneLock(t *testing.T) {
	for _, c := range []struct {
		version     string
		latchesLeft bool
	}{{"3.23", false}, {"3.52", true}, {"4.7", false}} {
		t.Run(c.version, func(t *testing.T) {
			cfg := single(t)
			rdb := inspect(t, cfg.Addrs[0])
			ctx := context.Background()

			fd, err := drivers.Parse("redisson-fair:version=" + c.version)
			if err != nil {
				t.Fatal(err)
			}
			fl := openDriver(t, fd, cfg)
			fw := fl.NewWorker()
			must(t, fw.Lock(ctx, "gone:fair"))
			must(t, rdb.Del(ctx, "gone:fair").Err())
			if err := fw.Unlock(ctx, "gone:fair"); err != nil {
				t.Errorf("fair unlock of a deleted lock = %v, want nil (Redisson's script answers 1)", err)
			}

			rcfg := cfg
			rcfg.Needs = drivers.KindRW
			rd, err := drivers.Parse("redisson:version=" + c.version)
			if err != nil {
				t.Fatal(err)
			}
			rl := openDriver(t, rd, rcfg)
			rw := rl.NewWorker().(drivers.RWWorker)
			must(t, rw.RLock(ctx, "gone:rw"))
			must(t, rdb.Del(ctx, "gone:rw").Err())
			if err := rw.RUnlock(ctx, "gone:rw"); !errors.Is(err, drivers.ErrNotHeld) {
				t.Errorf("read unlock of a deleted lock = %v, want ErrNotHeld", err)
			}
			must(t, fl.Close()) // waits for the latches' DELs
			must(t, rl.Close())

			for _, name := range []string{"gone:fair", "gone:rw"} {
				latches, err := rdb.Keys(ctx, "redisson_unlock_latch:{"+name+"}:*").Result()
				if err != nil {
					t.Fatal(err)
				}
				if !c.latchesLeft {
					if len(latches) != 0 {
						t.Errorf("%s: latches %v left, want none", name, latches)
					}
					continue
				}
				if len(latches) != 1 {
					t.Fatalf("%s: latches %v, want the unlock's, left until its PX", name, latches)
				}
				if v := rdb.Get(ctx, latches[0]).Val(); v != "1" {
					t.Errorf("%s: latch %s = %q, want 1", name, latches[0], v)
				}
				if pttl := rdb.PTTL(ctx, latches[0]).Val(); pttl.Milliseconds() > 20000 || pttl <= 0 {
					t.Errorf("%s: latch PTTL %v, want at most 20 s (a random 16–20 s PX)", name, pttl)
				}
			}
		})
	}
}

// TestRedissonFairUndatedHead checks the fair lock with a queued waiter that has no deadline (a
// queue entry without its score), per profile: 3.23's stale-waiter loop fails on it
// (RedissonFairLock at redisson-3.23.0), 3.43's keeps it and then fails computing the new
// waiter's deadline from it (no zscore(last) guard), 3.52 and 4.7 keep it and queue the new
// waiter behind it after the lock's PTTL (the guard), so the waiter waits until it gives up.
func TestRedissonFairUndatedHead(t *testing.T) {
	for _, c := range []struct {
		version string
		queues  bool
	}{{"3.23", false}, {"3.43", false}, {"3.52", true}, {"4.7", true}} {
		t.Run(c.version, func(t *testing.T) {
			cfg := single(t)
			rdb := inspect(t, cfg.Addrs[0])
			d, err := drivers.Parse("redisson-fair:version=" + c.version)
			if err != nil {
				t.Fatal(err)
			}
			w := openDriver(t, d, cfg).NewWorker()
			bg := context.Background()
			const name = "undated:k"
			must(t, rdb.RPush(bg, "redisson_lock_queue:{"+name+"}", "ghost").Err())
			ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
			defer cancel()
			err = w.Lock(ctx, name)
			if c.queues {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Lock behind a waiter without a deadline = %v, want to wait until ctx ends", err)
				}
			} else if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Lock behind a waiter without a deadline = %v, want the script's error", err)
			}
			if q := rdb.LRange(bg, "redisson_lock_queue:{"+name+"}", 0, -1).Val(); len(q) != 1 || q[0] != "ghost" {
				t.Errorf("queue %v after the waiter gave up, want [ghost]", q)
			}
		})
	}
}
