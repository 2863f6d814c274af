package drivers_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/redis/go-redis/v9"
)

// renewalScripts returns the number of keys of each script MONITOR saw run (followed by the
// Redis calls it made): on a client holding its locks and doing nothing else, every one is a
// renewal.
func renewalScripts(lines []monitorLine) []int {
	var numkeys []int
	for i, l := range lines {
		cmd := strings.ToLower(l.args[0])
		if l.client == "lua" || (cmd != "eval" && cmd != "evalsha") || len(l.args) < 3 {
			continue
		}
		if i+1 == len(lines) || lines[i+1].client != "lua" {
			continue // an EVALSHA answered NOSCRIPT (then loaded and sent again), or one still running
		}
		n, _ := strconv.Atoi(l.args[2])
		numkeys = append(numkeys, n)
	}
	return numkeys
}

// TestRedissonRenewalBatches checks Redisson 3.44+'s batched renewals on a single server
// (RenewalTask, LockTask, ReadLockTask at redisson-3.52.0 and redisson-4.7.0): 150 locks held
// by one client are renewed by 2 scripts per period, 100 locks and 50, whatever their hash
// tags; read locks likewise, with two keys per lock.
//
// The 1.5 s watchdog (a run every 500 ms) leaves the renewals a second of slack on a loaded
// machine: with 600 ms a starved run once let a lock expire.
func TestRedissonRenewalBatches(t *testing.T) {
	const held = 150
	for _, version := range []string{"3.52", "4.7"} {
		for _, read := range []bool{false, true} {
			kind := "lock"
			if read {
				kind = "read"
			}
			t.Run(version+"/"+kind, func(t *testing.T) {
				cfg := single(t)
				cfg.Needs = drivers.KindRW
				d, err := drivers.Parse("redisson:version=" + version + ":watchdog=1500ms")
				if err != nil {
					t.Fatal(err)
				}
				l := openDriver(t, d, cfg)
				w := l.NewWorker()
				ctx := context.Background()
				names := make([]string, held)
				for i := range names {
					names[i] = "rb:" + strconv.Itoa(i) // 150 different hash tags (slots)
					if read {
						must(t, w.(drivers.RWWorker).RLock(ctx, names[i]))
					} else {
						must(t, w.Lock(ctx, names[i]))
					}
				}
				mon := startMonitor(t, cfg.Addrs[0])
				const runs = 3
				mon.waitFor(t, strconv.Itoa(runs)+" renewal runs", func(lines []monitorLine) bool {
					return len(renewalScripts(lines)) >= 2*runs+1
				})
				perLock := 1
				if read {
					perLock = 2 // the lock and its "{name}" prefix
				}
				// A run sends the first 100 names it meets, then the other 50. MONITOR may have
				// started between the two scripts of a run.
				all := renewalScripts(mon.snapshot())
				if all[0] != 100*perLock {
					all = all[1:]
				}
				got := all[:2*runs]
				want := slices.Repeat([]int{100 * perLock, 50 * perLock}, runs)
				if !slices.Equal(got, want) {
					t.Fatalf("renewal scripts' key counts %v, want %v: each run one script of 100 locks and one of 50", got, want)
				}
				rdb := inspect(t, cfg.Addrs[0])
				for _, n := range names {
					if pttl := rdb.PTTL(ctx, n).Val(); pttl <= 0 {
						t.Fatalf("%s: PTTL %v after %d renewal runs: not held", n, pttl, runs)
					}
				}
			})
		}
	}
}

// TestRedissonRenewalErrorKeeps checks that a renewal script that fails leaves the locks to the
// next run (RenewalTask.run logs the error and schedules again, at redisson-3.52.0 and 4.7.0),
// using the read lock renewal of redisson-3.52.0 (ReadLockTask), whose shadowed key index fails
// on a reader holding twice beside another reader; 4.x's fixed script renews the same holds.
func TestRedissonRenewalErrorKeeps(t *testing.T) {
	for _, c := range []struct {
		version string
		fails   bool
	}{{"3.52", true}, {"4.7", false}} {
		t.Run(c.version, func(t *testing.T) {
			cfg := single(t)
			cfg.Needs = drivers.KindRW
			d, err := drivers.Parse("redisson:version=" + c.version + ":watchdog=1500ms")
			if err != nil {
				t.Fatal(err)
			}
			l := openDriver(t, d, cfg)
			a, b := l.NewWorker().(drivers.RWWorker), l.NewWorker().(drivers.RWWorker)
			ctx := context.Background()
			const name = "re:k"
			rdb := inspect(t, cfg.Addrs[0])
			before := scriptFailures(t, rdb)
			must(t, a.RLock(ctx, name))
			must(t, a.RLock(ctx, name))
			must(t, b.RLock(ctx, name))
			mon := startMonitor(t, cfg.Addrs[0])
			const runs = 3
			mon.waitFor(t, strconv.Itoa(runs)+" renewal runs", func(lines []monitorLine) bool {
				return len(renewalScripts(lines)) >= runs
			})
			failed := scriptFailures(t, rdb) - before
			if c.fails && failed < runs {
				t.Errorf("%d failed renewal scripts in %d runs: want every run to fail and the next to try again", failed, runs)
			}
			if !c.fails && failed != 0 {
				t.Errorf("%d failed renewal scripts, want none", failed)
			}
			if pttl := rdb.PTTL(ctx, name).Val(); pttl <= 0 {
				t.Errorf("PTTL %v after %d renewal runs", pttl, runs)
			}
			if c.fails {
				// The failed scripts stopped before a's timeout keys, which expire; a's first
				// read unlock then finds no timeout key left and deletes the lock (RedissonReadLock
				// unlock): what Redisson 3.52 does too.
				return
			}
			must(t, a.RUnlock(ctx, name))
			must(t, a.RUnlock(ctx, name))
			must(t, b.RUnlock(ctx, name))
		})
	}
}

// scriptFailures returns the ERR replies in INFO errorstats: a script that fails replies
// "ERR user_script:…" (NOSCRIPT, which EVALSHA gets once per script, is counted apart).
func scriptFailures(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "errorstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "errorstat_ERR:count="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// TestRedissonRenewalSlots checks that on a cluster the batched renewal goes slot by slot
// (RenewalTask.renewSlots at redisson-3.52.0 and 4.7.0): 6 locks in one slot and 4 in another
// are renewed by one script of 6 and one of 4 per run, never one of 10 or one per lock.
func TestRedissonRenewalSlots(t *testing.T) {
	c := redistest.NewCluster(t)
	cfg := drivers.Config{Topology: compose.KindCluster, Addrs: c.Addrs(), Concurrency: 1}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var mons []*monitor
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		mons = append(mons, startMonitor(t, m.Options().Addr))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := drivers.Parse("redisson:version=4.7:watchdog=1500ms")
	if err != nil {
		t.Fatal(err)
	}
	w := openDriver(t, d, cfg).NewWorker()
	for i := range 6 {
		must(t, w.Lock(ctx, "{ra}:"+strconv.Itoa(i)))
	}
	for i := range 4 {
		must(t, w.Lock(ctx, "{rb}:"+strconv.Itoa(i)))
	}
	// Lock scripts have one key; scripts of more are renewals.
	renewals := func() []int {
		var n []int
		for _, m := range mons {
			for _, k := range renewalScripts(m.snapshot()) {
				if k > 1 {
					n = append(n, k)
				}
			}
		}
		return n
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := renewals()
		sixes, fours := 0, 0
		for _, k := range got {
			switch k {
			case 6:
				sixes++
			case 4:
				fours++
			default:
				t.Fatalf("a renewal script of %d keys (all %v), want one of 6 and one of 4 per run", k, got)
			}
		}
		if sixes >= 3 && fours >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("renewal scripts %v in 20 s, want 3 runs", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
