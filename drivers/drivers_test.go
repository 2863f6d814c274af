package drivers_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
)

func open(t testing.TB, name string, concurrency int) drivers.Locker {
	t.Helper()
	srv := redistest.NewServer(t)
	d, err := drivers.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Open(context.Background(), drivers.Config{Topology: "single", Addrs: srv.Addrs(), Concurrency: concurrency})
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestRegistry(t *testing.T) {
	for _, name := range []string{"lockcore", "naive"} {
		d, err := drivers.Get(name)
		if err != nil || d.Name() != name || !d.Kinds().Has(drivers.KindMutex) {
			t.Errorf("driver %s: %v, %v", name, d, err)
		}
	}
	if _, err := drivers.Get("nope"); err == nil {
		t.Error("unknown driver found")
	}
	if got := (drivers.KindMutex | drivers.KindReentrant).String(); got != "mutex,reentrant" {
		t.Errorf("Kind.String() = %q", got)
	}
}

func TestDriversExcludeAndRelease(t *testing.T) {
	for _, name := range drivers.Names() {
		t.Run(name, func(t *testing.T) {
			const workers, rounds, keys = 16, 100, 3
			l := open(t, name, workers)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var occupancy [keys]atomic.Int32
			var violations atomic.Int64
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					wk := l.NewWorker()
					for i := range rounds {
						k := (w + i) % keys
						name := fmt.Sprintf("drv:%d", k)
						if err := wk.Lock(ctx, name); err != nil {
							t.Error(err)
							return
						}
						if occupancy[k].Add(1) != 1 {
							violations.Add(1)
						}
						occupancy[k].Add(-1)
						if err := wk.Unlock(ctx, name); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if v := violations.Load(); v != 0 {
				t.Fatalf("%d violations", v)
			}
			// Released: a fresh worker takes every key at once.
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
			if err := wk.Unlock(ctx, "drv:never"); !errors.Is(err, drivers.ErrNotHeld) {
				t.Fatalf("unlock of a lock never taken = %v, want ErrNotHeld", err)
			}
		})
	}
}

// BenchmarkLockUnlock measures lock+unlock cycles per second for each driver on one private
// server, 64 goroutines over 10000 keys: compare the drivers' acq/s side by side in one run.
func BenchmarkLockUnlock(b *testing.B) {
	for _, name := range drivers.Names() {
		b.Run(name, func(b *testing.B) {
			l := open(b, name, 64)
			ctx := context.Background()
			var seq atomic.Uint64
			b.ReportAllocs()
			b.SetParallelism(32) // 32 per GOMAXPROCS: 64 goroutines on a 2-core machine
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				wk := l.NewWorker()
				rng := rand.New(rand.NewPCG(seq.Add(1), 1))
				for pb.Next() {
					name := fmt.Sprintf("bench:%d", rng.IntN(10000))
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
