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
	"github.com/lockbench/lockbench/lockcore"
	"github.com/redis/go-redis/v9"
)

// kindBits are the kinds a driver may list, one bit each.
var kindBits = []drivers.Kind{drivers.KindMutex, drivers.KindReentrant, drivers.KindFair, drivers.KindRW, drivers.KindMulti, drivers.KindFenced}

// implements reports whether w has the interface kind k promises (the kinds without one only
// need Worker).
func implements(w drivers.Worker, k drivers.Kind) bool {
	switch k {
	case drivers.KindRW:
		_, ok := w.(drivers.RWWorker)
		return ok
	case drivers.KindMulti:
		_, ok := w.(drivers.MultiWorker)
		return ok
	case drivers.KindFenced:
		_, ok := w.(drivers.FencedWorker)
		return ok
	}
	return true
}

// use takes and releases a lock through the interface of kind k, so that a promised interface
// is not only there but works.
func use(ctx context.Context, w drivers.Worker, k drivers.Kind, name string) error {
	switch k {
	case drivers.KindRW:
		rw := w.(drivers.RWWorker)
		if err := rw.RLock(ctx, name); err != nil {
			return err
		}
		return rw.RUnlock(ctx, name)
	case drivers.KindMulti:
		names := []string{name + ":a", name + ":b"}
		m := w.(drivers.MultiWorker)
		if err := m.LockMulti(ctx, names); err != nil {
			return err
		}
		return m.UnlockMulti(ctx, names)
	case drivers.KindFenced:
		token, err := w.(drivers.FencedWorker).LockFenced(ctx, name)
		if err != nil {
			return err
		}
		if token < 1 {
			return fmt.Errorf("token %d, want >= 1", token)
		}
		return w.Unlock(ctx, name)
	}
	if err := w.Lock(ctx, name); err != nil {
		return err
	}
	return w.Unlock(ctx, name)
}

// TestKindsAreTruthful checks, for every registered driver, that each kind it lists can be asked
// for in Config.Needs, alone or all together, and that its workers then implement and serve the
// kind's interface.
func TestKindsAreTruthful(t *testing.T) {
	cfg := single(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range drivers.Names() {
		t.Run(name, func(t *testing.T) {
			d, _ := drivers.Get(name)
			kinds := d.Kinds()
			needs := []drivers.Kind{0, kinds}
			for _, k := range kindBits {
				if kinds.Has(k) {
					needs = append(needs, k)
				}
			}
			for _, need := range needs {
				c := cfg
				c.Needs = need
				w := openDriver(t, d, c).NewWorker()
				for _, k := range kindBits {
					if !need.Has(k) && !(need == 0 && k == drivers.KindMutex) {
						continue
					}
					if !implements(w, k) {
						t.Errorf("Needs %v: the worker (%T) lacks the interface of %v", need, w, k)
						continue
					}
					if err := use(ctx, w, k, fmt.Sprintf("kinds:%s:%v:%v", name, need, k)); err != nil {
						t.Errorf("Needs %v: %v through %T: %v", need, k, w, err)
					}
				}
			}
		})
	}
}

// TestLockcoreDriversRefuseKindsTheyLack checks that the lockcore drivers say ErrUnsupported
// when asked for a kind they do not have, before connecting.
func TestLockcoreDriversRefuseKindsTheyLack(t *testing.T) {
	cfg := drivers.Config{Topology: compose.KindSingle, Addrs: []string{"127.0.0.1:1"}}
	for _, name := range []string{"lockcore", "lockcore-fair", "lockcore-fenced", "redisson", "redisson-fair"} {
		d, _ := drivers.Get(name)
		for _, k := range kindBits {
			if d.Kinds().Has(k) {
				continue
			}
			c := cfg
			c.Needs = k
			if l, err := d.Open(context.Background(), c); !errors.Is(err, drivers.ErrUnsupported) {
				if l != nil {
					l.Close()
				}
				t.Errorf("%s with Needs %v: %v, want ErrUnsupported", name, k, err)
			}
		}
	}
}

// TestLockcoreSettingsNameTheLock checks that each lockcore driver records which lock it runs.
func TestLockcoreSettingsNameTheLock(t *testing.T) {
	cfg := single(t)
	for name, want := range map[string]string{"lockcore": "Mutex", "lockcore-fair": "FairMutex", "lockcore-fenced": "FencedMutex"} {
		if got := openWith(t, name, cfg).Settings()["lock"]; !strings.HasPrefix(got, want) {
			t.Errorf("%s: lock setting %q, want %s…", name, got, want)
		}
	}
	cfg.Needs = drivers.KindRW | drivers.KindMulti
	s := openWith(t, "lockcore", cfg).Settings()
	if !strings.HasPrefix(s["lock"], "RWMutex") || !strings.Contains(s["multi_lock"], "MultiLock") {
		t.Errorf("lockcore for rw and multi: settings %v", s)
	}
}

// newAs returns a new worker of l as a T (RWWorker, MultiWorker, FencedWorker), failing the test
// if it is not one. Call it from the test's goroutine.
func newAs[T drivers.Worker](t *testing.T, l drivers.Locker) T {
	t.Helper()
	w := l.NewWorker()
	as, ok := w.(T)
	if !ok {
		t.Fatalf("%T is not a %T", w, (*T)(nil))
	}
	return as
}

// blocked reports whether lock, given 150 ms, ends with the deadline: the lock is held.
func blocked(t *testing.T, lock func(context.Context) error) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	err := lock(ctx)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock: %v", err)
	}
	return err != nil
}

// TestLockcoreRW checks the lockcore driver's read-write lock: readers share, a writer waits for
// them and keeps readers out, and under concurrency a writer is always alone.
func TestLockcoreRW(t *testing.T) {
	cfg := single(t)
	cfg.Needs = drivers.KindRW
	cfg.Concurrency = 16
	l := openWith(t, "lockcore", cfg)
	ctx := context.Background()
	r1, r2, wr := newAs[drivers.RWWorker](t, l), newAs[drivers.RWWorker](t, l), newAs[drivers.RWWorker](t, l)
	const name = "rw:k"
	if err := r1.RLock(ctx, name); err != nil {
		t.Fatal(err)
	}
	if blocked(t, func(ctx context.Context) error { return r2.RLock(ctx, name) }) {
		t.Fatal("a second reader waited for the first")
	}
	if !blocked(t, func(ctx context.Context) error { return wr.Lock(ctx, name) }) {
		t.Fatal("a writer got the lock while two readers held it")
	}
	for _, r := range []drivers.RWWorker{r1, r2} {
		if err := r.RUnlock(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := wr.Lock(ctx, name); err != nil {
		t.Fatal(err)
	}
	if !blocked(t, func(ctx context.Context) error { return r1.RLock(ctx, name) }) {
		t.Fatal("a reader got the lock while a writer held it")
	}
	if err := r1.RUnlock(ctx, name); !errors.Is(err, drivers.ErrNotHeld) {
		t.Fatalf("RUnlock without a read hold = %v, want ErrNotHeld", err)
	}
	if err := wr.Unlock(ctx, name); err != nil {
		t.Fatal(err)
	}

	// Under concurrency: writers add 1<<20 to a key's state, readers 1, and a writer must find
	// the state empty and a reader no writer in it.
	const workers, rounds, keys = 16, 30, 2
	var state [keys]atomic.Int64
	var violations atomic.Int64
	var wg sync.WaitGroup
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for w := range workers {
		wg.Add(1)
		wk := newAs[drivers.RWWorker](t, l)
		go func() {
			defer wg.Done()
			for i := range rounds {
				k := (w + i) % keys
				name := fmt.Sprintf("rwc:%d", k)
				write := (w+i)%4 == 0
				lock, unlock, mark := wk.RLock, wk.RUnlock, int64(1)
				if write {
					lock, unlock, mark = wk.Lock, wk.Unlock, 1<<20
				}
				if err := lock(cctx, name); err != nil {
					t.Errorf("worker %d lock %s (write %v): %v", w, name, write, err)
					return
				}
				v := state[k].Add(mark)
				if (write && v != mark) || (!write && v >= 1<<20) {
					violations.Add(1)
				}
				time.Sleep(100 * time.Microsecond)
				state[k].Add(-mark)
				if err := unlock(cctx, name); err != nil {
					t.Errorf("worker %d unlock %s: %v", w, name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d read-write violations", v)
	}
}

// multiExclude runs workers that each take overlapping sets of fanout of keys names with
// LockMulti, and fails on an overlap seen by per-key occupancy counters, an error, or a set
// never granted (a deadlock would run into the context's end).
func multiExclude(t *testing.T, l drivers.Locker, prefix string, workers, rounds, keys, fanout int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	occupancy := make([]atomic.Int32, keys)
	var violations, granted atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		wk := newAs[drivers.MultiWorker](t, l)
		go func() {
			defer wg.Done()
			idx := make([]int, fanout)
			names := make([]string, fanout)
			for i := range rounds {
				// Consecutive keys from a moving start, listed in a worker-dependent order, so
				// sets overlap and are not handed over sorted.
				for j := range fanout {
					idx[j] = (w + i + j*(1+w%2)) % keys
				}
				slices.Sort(idx)
				idx = slices.Compact(idx)
				names = names[:len(idx)]
				for j, k := range idx {
					names[len(idx)-1-j] = fmt.Sprintf("%s:%d", prefix, k)
				}
				if err := wk.LockMulti(ctx, names); err != nil {
					t.Errorf("worker %d LockMulti %v: %v", w, names, err)
					return
				}
				granted.Add(1)
				for _, k := range idx {
					if occupancy[k].Add(1) != 1 {
						violations.Add(1)
					}
				}
				time.Sleep(100 * time.Microsecond)
				for _, k := range idx {
					occupancy[k].Add(-1)
				}
				if err := wk.UnlockMulti(ctx, names); err != nil {
					t.Errorf("worker %d UnlockMulti %v: %v", w, names, err)
					return
				}
				idx = idx[:fanout]
				names = names[:fanout]
			}
		}()
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d mutual-exclusion violations in %d multi-lock grants", v, granted.Load())
	}
	if got, want := granted.Load(), int64(workers*rounds); got != want && !t.Failed() {
		t.Fatalf("%d multi-lock grants, want %d", got, want)
	}
}

// allOrNothing checks that LockMulti over a set with one lock held elsewhere gives up holding
// none of the others.
func allOrNothing(t *testing.T, l drivers.Locker, prefix string) {
	t.Helper()
	ctx := context.Background()
	holder, multi, other := l.NewWorker(), newAs[drivers.MultiWorker](t, l), l.NewWorker()
	names := []string{prefix + ":x", prefix + ":y", prefix + ":z"}
	if err := holder.Lock(ctx, names[1]); err != nil {
		t.Fatal(err)
	}
	if !blocked(t, func(ctx context.Context) error { return multi.LockMulti(ctx, names) }) {
		t.Fatal("LockMulti granted a set with one lock held by another worker")
	}
	for _, n := range []string{names[0], names[2]} {
		if blocked(t, func(ctx context.Context) error { return other.Lock(ctx, n) }) {
			t.Fatalf("%s still held after a LockMulti that gave up", n)
		}
		if err := other.Unlock(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := multi.UnlockMulti(ctx, names); !errors.Is(err, drivers.ErrNotHeld) {
		t.Fatalf("UnlockMulti of a set not held = %v, want ErrNotHeld", err)
	}
	if err := holder.Unlock(ctx, names[1]); err != nil {
		t.Fatal(err)
	}
}

func TestLockcoreMulti(t *testing.T) {
	cfg := single(t)
	cfg.Needs = drivers.KindMulti
	cfg.Concurrency = 12
	l := openWith(t, "lockcore", cfg)
	multiExclude(t, l, "ml", 12, 15, 5, 3)
	allOrNothing(t, l, "ml1")
}

// TestLockcoreMultiOnCluster checks that sets whose keys hash to different slots, on different
// masters, are taken all or nothing without CROSSSLOT.
func TestLockcoreMultiOnCluster(t *testing.T) {
	t.Parallel() // its own cluster, mostly waited for
	c := redistest.NewCluster(t)
	cfg := drivers.Config{Topology: compose.KindCluster, Addrs: c.Addrs(), Needs: drivers.KindMulti, Concurrency: 8}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer rdb.Close()
	slots := map[int64]bool{}
	for k := range 5 {
		slot, err := rdb.ClusterKeySlot(context.Background(), fmt.Sprintf("mlc:%d", k)).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[slot] = true
	}
	if len(slots) < 3 {
		t.Fatalf("the test's keys hash to %d slots; want them spread", len(slots))
	}
	l := openWith(t, "lockcore", cfg)
	multiExclude(t, l, "mlc", 8, 10, 5, 3)
	allOrNothing(t, l, "mlc1")
}

// TestLockcoreFencedTokens checks that grants of one lock by different workers, and reentrant
// grants, get strictly increasing tokens, and that the token counter stays after the release.
func TestLockcoreFencedTokens(t *testing.T) {
	cfg := single(t)
	l := openWith(t, "lockcore-fenced", cfg)
	ctx := context.Background()
	a, b := newAs[drivers.FencedWorker](t, l), newAs[drivers.FencedWorker](t, l)
	const name = "fence:k"
	var last int64
	for i := range 10 {
		w := a
		if i%2 == 1 {
			w = b
		}
		tok, err := w.LockFenced(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if tok <= last {
			t.Fatalf("grant %d: token %d after %d", i, tok, last)
		}
		last = tok
		if i == 4 {
			again, err := w.LockFenced(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if again <= tok {
				t.Fatalf("reentrant grant: token %d after %d", again, tok)
			}
			last = again
			if err := w.Unlock(ctx, name); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Unlock(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	got, err := inspect(t, cfg.Addrs[0]).Get(ctx, "redisson_lock_token:{"+name+"}").Int64()
	if err != nil || got != last {
		t.Fatalf("token counter %d, %v; want %d, the last grant's", got, err, last)
	}
}

// TestLockcoreFairIsFIFO checks that lockcore-fair grants a released lock to its waiters in the
// order they came.
func TestLockcoreFairIsFIFO(t *testing.T) {
	cfg := single(t)
	l := openWith(t, "lockcore-fair", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const name = "fair:k"
	holder := l.NewWorker()
	if err := holder.Lock(ctx, name); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		w := l.NewWorker()
		go func() {
			defer wg.Done()
			if err := w.Lock(ctx, name); err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			if err := w.Unlock(ctx, name); err != nil {
				t.Errorf("waiter %d unlock: %v", i, err)
			}
		}()
		time.Sleep(60 * time.Millisecond) // let waiter i queue before i+1 comes
	}
	if err := holder.Unlock(ctx, name); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !slices.Equal(order, []int{0, 1, 2, 3}) {
		t.Fatalf("grant order %v, want arrival order [0 1 2 3]", order)
	}
}

// TestLockcoreRedLock checks the lockcore driver on three independent masters: it runs RedLock,
// sets the lock on every master, excludes, serves reentrant holds and multi-locks, refuses
// read-write locks, survives one dead master and fails, rather than waits, with two.
func TestLockcoreRedLock(t *testing.T) {
	m := redistest.NewMasters(t, 3)
	addrs := m.Addrs()
	cfg := drivers.Config{Topology: compose.KindMasters, Addrs: addrs, Concurrency: 8}
	rw := cfg
	rw.Needs = drivers.KindRW
	if l, err := openLockcore(rw); !errors.Is(err, drivers.ErrUnsupported) {
		if l != nil {
			l.Close()
		}
		t.Fatalf("lockcore rw on masters: %v, want ErrUnsupported", err)
	}
	cfg.Needs = drivers.KindMutex | drivers.KindReentrant | drivers.KindMulti
	l := openWith(t, "lockcore", cfg)
	s := l.Settings()
	if s["quorum"] != "2" || !strings.HasPrefix(s["lock"], "RedLock over 3") || s["lease"] != drivers.LockcoreRedLockDefaultLease.String()+", not renewed" {
		t.Errorf("settings %v", s)
	}
	exclude(t, l, "lr", 8, 10, 3)
	handOver(t, l, "lr:handover")

	ctx := context.Background()
	w := l.NewWorker()
	for range 2 { // reentrant
		if err := w.Lock(ctx, "lr:everywhere"); err != nil {
			t.Fatal(err)
		}
	}
	for _, addr := range addrs {
		rdb := inspect(t, addr)
		if n, _ := rdb.Exists(ctx, "lr:everywhere").Result(); n != 1 {
			t.Errorf("lock key missing on master %s", addr)
		}
		if ttl := rdb.PTTL(ctx, "lr:everywhere").Val(); ttl <= 0 || ttl > drivers.LockcoreRedLockDefaultLease {
			t.Errorf("master %s: PTTL %v, want the %v lease", addr, ttl, drivers.LockcoreRedLockDefaultLease)
		}
	}
	for range 2 {
		if err := w.Unlock(ctx, "lr:everywhere"); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Unlock(ctx, "lr:everywhere"); !errors.Is(err, drivers.ErrNotHeld) {
		t.Fatalf("third unlock of a twice-taken RedLock = %v, want ErrNotHeld", err)
	}
	multiExclude(t, l, "lrm", 6, 6, 4, 2)

	if err := m.Kill(addrs[0]); err != nil {
		t.Fatal(err)
	}
	exclude(t, l, "lr1", 4, 5, 2)

	if err := m.Kill(addrs[1]); err != nil {
		t.Fatal(err)
	}
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.Lock(lctx, "lr2:x"); !errors.Is(err, lockcore.ErrNoQuorum) {
		t.Fatalf("Lock with 2 of 3 masters dead = %v, want an error wrapping ErrNoQuorum", err)
	}
}

// TestLockcoreNodeTimeout checks the node_timeout option: the RedLocks of the lockcore driver
// on masters wait that long for a master (their settings say so), and on a topology without
// RedLock the option is refused rather than ignored.
func TestLockcoreNodeTimeout(t *testing.T) {
	d, err := drivers.Parse("lockcore:node_timeout=1500ms")
	if err != nil {
		t.Fatal(err)
	}
	if l, err := d.Open(context.Background(), single(t)); !errors.Is(err, drivers.ErrBadOption) {
		if l != nil {
			l.Close()
		}
		t.Fatalf("node_timeout on a single server: %v, want ErrBadOption", err)
	}
	m := redistest.NewMasters(t, 3)
	l := openDriver(t, d, drivers.Config{Topology: compose.KindMasters, Addrs: m.Addrs(), Concurrency: 2})
	if got := l.Settings()["node_timeout"]; got != "1.5s" {
		t.Errorf("settings node_timeout %q, want 1.5s", got)
	}
	exclude(t, l, "nt", 2, 5, 1)
	def := openWith(t, "lockcore", drivers.Config{Topology: compose.KindMasters, Addrs: m.Addrs(), Concurrency: 2})
	if got := def.Settings()["node_timeout"]; got != lockcore.DefaultRedLockNodeTimeout.String() {
		t.Errorf("default settings node_timeout %q, want %v", got, lockcore.DefaultRedLockNodeTimeout)
	}
	if got, want := def.Settings()["lease"], drivers.LockcoreRedLockDefaultLease.String()+", not renewed"; got != want {
		t.Errorf("default settings lease %q, want %q", got, want)
	}
	// watchdog is the RedLock's lease on masters (the safety matrix's rows give it); --lease wins.
	wdd, err := drivers.Parse("lockcore:watchdog=1s")
	if err != nil {
		t.Fatal(err)
	}
	wd := openDriver(t, wdd, drivers.Config{Topology: compose.KindMasters, Addrs: m.Addrs(), Concurrency: 2})
	if got := wd.Settings()["lease"]; got != "1s, not renewed" {
		t.Errorf("watchdog=1s on masters: settings lease %q, want 1s, not renewed", got)
	}
	wd = openDriver(t, wdd, drivers.Config{Topology: compose.KindMasters, Addrs: m.Addrs(), Concurrency: 2, Lease: 3 * time.Second})
	if got := wd.Settings()["lease"]; got != "3s, not renewed" {
		t.Errorf("watchdog=1s and --lease 3s on masters: settings lease %q, want 3s, not renewed", got)
	}
}

func openLockcore(cfg drivers.Config) (drivers.Locker, error) {
	d, _ := drivers.Get("lockcore")
	return d.Open(context.Background(), cfg)
}
