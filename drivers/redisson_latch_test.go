package drivers_test

import (
	"context"
	"errors"
	"testing"

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
