package drivers_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/redis/go-redis/v9"
)

// crossed runs two workers over and over, one taking {a, b} and the other {b, a}, and fails on
// an overlap, an error, or a pair not granted before the context ends (a deadlock).
func crossed(t *testing.T, l drivers.Locker, a, b string, rounds int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var inside, violations, granted atomic.Int64
	var wg sync.WaitGroup
	for i, names := range [][]string{{a, b}, {b, a}} {
		wg.Add(1)
		w := newAs[drivers.MultiWorker](t, l)
		go func() {
			defer wg.Done()
			for range rounds {
				if err := w.LockMulti(ctx, names); err != nil {
					t.Errorf("worker %d LockMulti %v: %v", i, names, err)
					return
				}
				granted.Add(1)
				if inside.Add(1) != 1 {
					violations.Add(1)
				}
				time.Sleep(50 * time.Microsecond)
				inside.Add(-1)
				if err := w.UnlockMulti(ctx, names); err != nil {
					t.Errorf("worker %d UnlockMulti %v: %v", i, names, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d overlaps of {%s,%s} and {%s,%s}", v, a, b, b, a)
	}
	if g := granted.Load(); g != int64(2*rounds) && !t.Failed() {
		t.Fatalf("%d multi-lock grants, want %d", g, 2*rounds)
	}
}

func TestRedissonMulti(t *testing.T) {
	cfg := single(t)
	cfg.Needs = drivers.KindMulti
	cfg.Concurrency = 12
	l := openWith(t, "redisson", cfg)
	if s := l.Settings()["multi_lock"]; !strings.Contains(s, "RedissonMultiLock") {
		t.Errorf("multi_lock setting %q", s)
	}
	crossed(t, l, "rm:A", "rm:B", 200)
	multiExclude(t, l, "rm", 12, 15, 5, 3)
	allOrNothing(t, l, "rm1")
	noKeysLeft(t, inspect(t, cfg.Addrs[0]))
}

// TestRedissonMultiLease checks a multi-lock taken with the run's lease: every lock ends up with
// that lease, not the longer one Redisson takes them with, and is not renewed.
func TestRedissonMultiLease(t *testing.T) {
	cfg := single(t)
	cfg.Needs = drivers.KindMulti
	cfg.Lease = 2 * time.Second
	l := openWith(t, "redisson", cfg)
	rdb := inspect(t, cfg.Addrs[0])
	ctx := context.Background()
	w := newAs[drivers.MultiWorker](t, l)
	names := []string{"rml:b", "rml:a", "rml:c"}
	if err := w.LockMulti(ctx, names); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if pttl := rdb.PTTL(ctx, n).Val(); pttl <= 0 || pttl > cfg.Lease {
			t.Errorf("%s: PTTL %v, want within the lease %v", n, pttl, cfg.Lease)
		}
	}
	if err := w.UnlockMulti(ctx, names); err != nil {
		t.Fatal(err)
	}
	crossed(t, l, "rml:A", "rml:B", 50)
	noKeysLeft(t, rdb)
}

// TestRedissonMultiOnCluster checks multi-locks whose names hash to slots on different masters:
// one script per lock, so no CROSSSLOT, and still all or nothing without deadlock.
func TestRedissonMultiOnCluster(t *testing.T) {
	t.Parallel() // its own cluster, mostly waited for
	c := redistest.NewCluster(t)
	cfg := drivers.Config{Topology: compose.KindCluster, Addrs: c.Addrs(), Needs: drivers.KindMulti, Concurrency: 8}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer rdb.Close()
	ctx := context.Background()
	slots := map[int64]bool{}
	for _, k := range []string{"rmc:A", "rmc:B"} {
		slot, err := rdb.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[slot] = true
	}
	for k := range 5 {
		slot, err := rdb.ClusterKeySlot(ctx, fmt.Sprintf("rmc:%d", k)).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[slot] = true
	}
	if len(slots) < 4 {
		t.Fatalf("the test's keys hash to %d slots; want them spread", len(slots))
	}
	l := openWith(t, "redisson", cfg)
	crossed(t, l, "rmc:A", "rmc:B", 100)
	multiExclude(t, l, "rmc", 8, 10, 5, 3)
	allOrNothing(t, l, "rmc1")
	err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		var keys []string
		for _, k := range m.Keys(ctx, "*").Val() {
			if leftover(m, k) {
				keys = append(keys, k)
			}
		}
		if len(keys) != 0 {
			return fmt.Errorf("master %s: keys left: %v", m.Options().Addr, keys)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// parallelUnlocksInOrder rewrites a trace so that each run of consecutive unlock scripts (a
// script line naming an unlock channel, with its indented calls) is in name order: Redisson
// before 3.27.2 sends a multi-lock's unlocks all at once (RedissonMultiLock.unlock at
// redisson-3.23.5), so the order in which Redis runs them is a race.
func parallelUnlocksInOrder(trace string) string {
	lines := strings.Split(trace, "\n")
	var out []string
	var run []string // groups, each a script line and its calls joined by "\n"
	flush := func() {
		slices.Sort(run)
		for _, g := range run {
			out = append(out, strings.Split(g, "\n")...)
		}
		run = run[:0]
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, `"eval`) && strings.Contains(l, `"redisson_lock__channel:`) {
			g := l
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ") {
				i++
				g += "\n" + lines[i]
			}
			run = append(run, g)
			continue
		}
		flush()
		out = append(out, l)
	}
	flush()
	return strings.Join(out, "\n")
}

// TestParallelUnlocksInOrder checks the trace rewriting the 3.23 multi-lock traces rely on.
func TestParallelUnlocksInOrder(t *testing.T) {
	in := "[A]\n\"eval\" \"<script>\" \"1\" \"k1\"\n    \"exists\" \"k1\"\n" +
		"\"eval\" \"<script>\" \"2\" \"k2\" \"redisson_lock__channel:{k2}\"\n    \"del\" \"k2\"\n" +
		"\"eval\" \"<script>\" \"2\" \"k1\" \"redisson_lock__channel:{k1}\"\n    \"del\" \"k1\"\n" +
		"[B]\n"
	want := "[A]\n\"eval\" \"<script>\" \"1\" \"k1\"\n    \"exists\" \"k1\"\n" +
		"\"eval\" \"<script>\" \"2\" \"k1\" \"redisson_lock__channel:{k1}\"\n    \"del\" \"k1\"\n" +
		"\"eval\" \"<script>\" \"2\" \"k2\" \"redisson_lock__channel:{k2}\"\n    \"del\" \"k2\"\n" +
		"[B]\n"
	if got := parallelUnlocksInOrder(in); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestRedissonMultiUnlock checks RedissonMultiLock.unlock's failure handling per profile: 3.23
// sends every unlock (the locks after a failed one are released too), 3.27.2+ stops at the
// first failure (the locks after it stay held).
func TestRedissonMultiUnlock(t *testing.T) {
	for _, c := range []struct {
		version  string
		released bool // the lock after the failed one
	}{{"3.23", true}, {"3.52", false}, {"4.7", false}} {
		t.Run(c.version, func(t *testing.T) {
			cfg := single(t)
			cfg.Needs = drivers.KindMulti
			d, err := drivers.Parse("redisson:version=" + c.version)
			if err != nil {
				t.Fatal(err)
			}
			l := openDriver(t, d, cfg)
			w := l.NewWorker().(drivers.MultiWorker)
			rdb := inspect(t, cfg.Addrs[0])
			ctx := context.Background()
			names := []string{"mu:a", "mu:b", "mu:c"}
			must(t, w.LockMulti(ctx, names))
			must(t, rdb.Del(ctx, "mu:b").Err()) // b is no longer held: its unlock fails
			if err := w.UnlockMulti(ctx, names); !errors.Is(err, drivers.ErrNotHeld) {
				t.Fatalf("UnlockMulti with b gone = %v, want ErrNotHeld", err)
			}
			if n := rdb.Exists(ctx, "mu:a").Val(); n != 0 {
				t.Errorf("a still held after UnlockMulti")
			}
			held := rdb.Exists(ctx, "mu:c").Val() == 1
			if held == c.released {
				t.Errorf("c held after the failed UnlockMulti: %v, want %v", held, !c.released)
			}
			if held {
				must(t, w.(drivers.Worker).Unlock(ctx, "mu:c"))
			}
		})
	}
}

// TestRedissonMultiLockError checks that a lock script failing inside a multi-lock round is "not
// acquired", not an error: RedissonMultiLock.tryLock catches a lock's exception and starts the
// round again, so LockMulti takes the locks once the fault is gone.
func TestRedissonMultiLockError(t *testing.T) {
	cfg := single(t)
	cfg.Needs = drivers.KindMulti
	l := openWith(t, "redisson", cfg)
	w := l.NewWorker().(drivers.MultiWorker)
	rdb := inspect(t, cfg.Addrs[0])
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	must(t, rdb.Set(ctx, "me:b", "not a lock", 0).Err()) // the lock script fails with WRONGTYPE
	mon := startMonitor(t, cfg.Addrs[0])
	done := make(chan error, 1)
	go func() { done <- w.LockMulti(ctx, []string{"me:a", "me:b"}) }()
	mon.waitFor(t, "three attempts on me:b", func(lines []monitorLine) bool {
		n := 0
		for _, l := range lines {
			if l.client == "lua" && len(l.args) > 1 && strings.EqualFold(l.args[0], "exists") && l.args[1] == "me:b" {
				n++
			}
		}
		return n >= 3
	})
	select {
	case err := <-done:
		t.Fatalf("LockMulti returned %v while me:b's script failed, want it to keep trying", err)
	default:
	}
	must(t, rdb.Del(ctx, "me:b").Err())
	must(t, <-done)
	for _, n := range []string{"me:a", "me:b"} {
		if rdb.Exists(ctx, n).Val() != 1 {
			t.Errorf("%s not held after LockMulti", n)
		}
	}
	must(t, w.UnlockMulti(ctx, []string{"me:a", "me:b"}))
}
