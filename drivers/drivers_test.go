package drivers_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/internal/testparallel"
	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine running: every Locker must stop its
// watchdogs, subscriptions and connections on Close. Two client goroutines outlive Close by
// design and are not ours to stop: rueidis' cluster client closes connections it dropped from
// its slot map 5 s after a refresh, and go-redis, once a dead server has failed a pool's worth of
// dials, probes it every second and sees Close only after its sleep.
//
// The parallel tests mostly wait on the deployments they start, so more of them run at once than
// go test's default (GOMAXPROCS).
func TestMain(m *testing.M) {
	testparallel.Default(4)
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2"),
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}

// allDrivers is every adapter this package must register.
var allDrivers = []string{"lockcore", "lockcore-fair", "lockcore-fenced", "naive", "redislock", "redisson", "redisson-fair", "redisson-fenced", "redisson-spin", "redsync", "rueidislock"}

func single(t testing.TB) drivers.Config {
	t.Helper()
	return drivers.Config{Topology: compose.KindSingle, Addrs: redistest.NewServer(t).Addrs()}
}

// openWith opens the registered driver name on cfg and closes it when the test ends.
func openWith(t testing.TB, name string, cfg drivers.Config) drivers.Locker {
	t.Helper()
	d, err := drivers.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return openDriver(t, d, cfg)
}

func openDriver(t testing.TB, d drivers.Driver, cfg drivers.Config) drivers.Locker {
	t.Helper()
	l, err := d.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open %s on %s: %v", d.Name(), cfg.Topology, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("close %s: %v", d.Name(), err)
		}
	})
	return l
}

// open opens the driver on a private single server.
func open(t testing.TB, name string, concurrency int) drivers.Locker {
	t.Helper()
	cfg := single(t)
	cfg.Concurrency = concurrency
	return openWith(t, name, cfg)
}

func TestRegistry(t *testing.T) {
	for _, name := range allDrivers {
		d, err := drivers.Get(name)
		if err != nil || d.Name() != name || !d.Kinds().Has(drivers.KindMutex) {
			t.Errorf("driver %s: %v, %v", name, d, err)
		}
	}
	if got := drivers.Names(); len(got) != len(allDrivers) {
		t.Errorf("Names() = %v, want %v", got, allDrivers)
	}
	if _, err := drivers.Get("nope"); err == nil {
		t.Error("unknown driver found")
	}
	for k, want := range map[drivers.Kind]string{
		drivers.KindMutex | drivers.KindReentrant:             "mutex,reentrant",
		drivers.KindFair | drivers.KindRW | drivers.KindMulti: "fair,rw,multi",
		drivers.KindFenced: "fenced",
		drivers.KindMutex | drivers.KindReentrant | drivers.KindFenced: "mutex,reentrant,fenced",
		0: "none",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

// exclude runs workers × rounds lock/unlock cycles over keys locks and fails the test on any
// overlap seen by an occupancy counter that does not trust the lock, or on any error.
func exclude(t *testing.T, l drivers.Locker, prefix string, workers, rounds, keys int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	occupancy := make([]atomic.Int32, keys)
	var violations, acquisitions atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := l.NewWorker()
			for i := range rounds {
				k := (w + i) % keys
				name := fmt.Sprintf("%s:%d", prefix, k)
				if err := lockUnderLoad(t, l, wk, ctx, name); err != nil {
					t.Errorf("worker %d lock %s: %v", w, name, err)
					return
				}
				acquisitions.Add(1)
				if occupancy[k].Add(1) != 1 {
					violations.Add(1)
				}
				if i%4 == 0 {
					time.Sleep(100 * time.Microsecond) // hold some locks a little, so waiters wait
				}
				occupancy[k].Add(-1)
				if err := wk.Unlock(ctx, name); err != nil {
					t.Errorf("worker %d unlock %s: %v", w, name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d mutual-exclusion violations in %d acquisitions", v, acquisitions.Load())
	}
	if got, want := acquisitions.Load(), int64(workers*rounds); got != want && !t.Failed() {
		t.Fatalf("%d acquisitions, want %d", got, want)
	}
}

// handOver checks that a released lock goes promptly to a worker waiting for it: well before
// any driver's default lease (the shortest, rueidislock's, is 5 s) could have freed it instead.
func handOver(t *testing.T, l drivers.Locker, name string) {
	t.Helper()
	ctx := context.Background()
	a, b := l.NewWorker(), l.NewWorker()
	if err := a.Lock(ctx, name); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 4*time.Second)
		defer cancel()
		err := b.Lock(wctx, name)
		if err == nil {
			err = b.Unlock(ctx, name)
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond) // let b find the lock taken and start waiting
	select {
	case err := <-got:
		t.Fatalf("second worker finished while the lock was held: %v", err)
	default:
	}
	if err := a.Unlock(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter after release: %v", err)
	}
}

// Not parallel: 32 workers per driver keep the CPU busy, and beside other tests that starves
// rueidislock's 20 ms attempts into timeouts on a 2-core machine.
func TestDriversExcludeAndRelease(t *testing.T) {
	for _, name := range drivers.Names() {
		t.Run(name, func(t *testing.T) {
			const workers, rounds, keys = 32, 40, 3
			l := open(t, name, workers)
			exclude(t, l, "drv", workers, rounds, keys)
			// Released: a fresh worker takes every key at once.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			wk := l.NewWorker()
			for k := range keys {
				name := fmt.Sprintf("drv:%d", k)
				if err := wk.Lock(ctx, name); err != nil {
					t.Fatal(err)
				}
				if err := wk.Unlock(ctx, name); err != nil {
					t.Fatal(err)
				}
			}
			handOver(t, l, "drv:handover")
			// RedissonFairLock answers the unlock of a lock that does not exist as released
			// (its unlock script returns 1 at every tag read, issue 39): redisson-fair does too.
			if err := wk.Unlock(ctx, "drv:never"); !errors.Is(err, drivers.ErrNotHeld) && name != "redisson-fair" {
				t.Fatalf("unlock of a lock never taken = %v, want ErrNotHeld", err)
			}
			// The same through a different worker: a lock held by one worker is not another's.
			if err := wk.Lock(ctx, "drv:mine"); err != nil {
				t.Fatal(err)
			}
			if err := l.NewWorker().Unlock(ctx, "drv:mine"); !errors.Is(err, drivers.ErrNotHeld) {
				t.Fatalf("unlock by another worker = %v, want ErrNotHeld", err)
			}
			if err := wk.Unlock(ctx, "drv:mine"); err != nil {
				t.Fatalf("unlock by the holder after a refused foreign unlock: %v", err)
			}
		})
	}
}

// TestDriversLockHonoursContext checks that Lock on a taken lock returns the context's error
// when it ends, and that the lock is still the holder's afterwards.
func TestDriversLockHonoursContext(t *testing.T) {
	t.Parallel()
	for _, name := range drivers.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // a server of its own
			l := open(t, name, 2)
			ctx := context.Background()
			a, b := l.NewWorker(), l.NewWorker()
			if err := lockUnderLoad(t, l, a, ctx, "ctx:k"); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
			defer cancel()
			if err := b.Lock(wctx, "ctx:k"); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("lock of a held lock with a short context = %v, want DeadlineExceeded", err)
			}
			if err := a.Unlock(ctx, "ctx:k"); err != nil {
				t.Fatalf("holder's unlock after a waiter gave up: %v", err)
			}
		})
	}
}

// TestDriversMasters checks that every driver without a multi-master mode says so with
// ErrUnsupported, before connecting anywhere.
func TestDriversMasters(t *testing.T) {
	cfg := drivers.Config{Topology: compose.KindMasters, Addrs: []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}}
	for _, name := range drivers.Names() {
		if name == "redsync" || name == "lockcore" {
			continue // RedLock: TestRedsyncMasters, TestLockcoreRedLock
		}
		d, _ := drivers.Get(name)
		l, err := d.Open(context.Background(), cfg)
		if !errors.Is(err, drivers.ErrUnsupported) {
			if l != nil {
				l.Close()
			}
			t.Errorf("%s on masters: %v, want ErrUnsupported", name, err)
		}
	}
}

func TestDriversBadConfig(t *testing.T) {
	for _, c := range []struct {
		what string
		cfg  drivers.Config
	}{
		{"unknown topology", drivers.Config{Topology: "ring", Addrs: []string{"127.0.0.1:1"}}},
		{"no address", drivers.Config{Topology: compose.KindSingle}},
		{"sentinel without a master name", drivers.Config{Topology: compose.KindSentinel, Addrs: []string{"127.0.0.1:1"}}},
	} {
		for _, name := range drivers.Names() {
			d, _ := drivers.Get(name)
			l, err := d.Open(context.Background(), c.cfg)
			if err == nil {
				l.Close()
				t.Errorf("%s with %s: no error", name, c.what)
			} else if errors.Is(err, drivers.ErrUnsupported) {
				t.Errorf("%s with %s: %v wraps ErrUnsupported, a skip, not a failure", name, c.what, err)
			}
		}
	}
}

// TestDriversUnreachable checks that Open fails, and soon, when nothing listens at the address.
func TestDriversUnreachable(t *testing.T) {
	t.Parallel() // dials that fail; no server of its own to share
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, name := range drivers.Names() {
		d, _ := drivers.Get(name)
		start := time.Now()
		l, err := d.Open(context.Background(), drivers.Config{Topology: compose.KindSingle, Addrs: []string{addr}})
		if err == nil {
			l.Close()
			t.Errorf("%s opened on %s where nothing listens", name, addr)
			continue
		}
		if errors.Is(err, drivers.ErrUnsupported) {
			t.Errorf("%s: %v wraps ErrUnsupported", name, err)
		}
		// Bounded by drivers.ConnectTimeout per dial; a refused connection is much faster.
		if took := time.Since(start); took > 2*drivers.ConnectTimeout {
			t.Errorf("%s took %v to fail", name, took)
		}
	}
}

// BenchmarkLockUnlock measures lock+unlock cycles per second for each driver on one private
// server, 64 goroutines over 10000 keys: compare the drivers' acq/s side by side in one run.
func BenchmarkLockUnlock(b *testing.B) {
	for _, name := range drivers.Names() {
		b.Run(name, func(b *testing.B) {
			l := open(b, name, 64)
			ctx := context.Background()
			// Names are made before the clock starts, so that allocs/op counts the drivers' own.
			names := make([]string, 10000)
			for i := range names {
				names[i] = fmt.Sprintf("bench:%d", i)
			}
			var seq atomic.Uint64
			b.ReportAllocs()
			b.SetParallelism(32) // 32 per GOMAXPROCS: 64 goroutines on a 2-core machine
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				wk := l.NewWorker()
				rng := rand.New(rand.NewPCG(seq.Add(1), 1))
				for pb.Next() {
					name := names[rng.IntN(len(names))]
					if err := wk.Lock(ctx, name); err != nil {
						b.Error(err)
						return
					}
					if err := wk.Unlock(ctx, name); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "acq/s")
		})
	}
}

// lockUnderLoad is w.Lock(ctx, name), taken again (at most 5 times, each logged) when
// rueidislock gave up: it gives up a key whose SET has not answered within its TryNextAfter
// (20 ms, rueidis v1.0.79 lock.go acquire) and returns context.DeadlineExceeded while the
// caller's context lives — a loaded machine's reply time, not a broken lock. Every other error
// is returned at once; the callers check exclusion on every grant all the same.
func lockUnderLoad(t *testing.T, l drivers.Locker, w drivers.Worker, ctx context.Context, name string) error {
	err := w.Lock(ctx, name)
	for retries := 0; err != nil && retries < 5 && rueidislockGaveUp(l, ctx, err); retries++ {
		t.Logf("lock %s: %v (rueidislock's per-key timeout under load; again)", name, err)
		err = w.Lock(ctx, name)
	}
	return err
}

// rueidislockGaveUp reports whether err is rueidislock's per-key acquire timeout (TryNextAfter)
// firing while the caller's ctx still lives (see exclude).
func rueidislockGaveUp(l drivers.Locker, ctx context.Context, err error) bool {
	return errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil &&
		strings.Contains(l.Settings()["library"], "rueidislock")
}
