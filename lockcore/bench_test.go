package lockcore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/lockhooks"
)

// BenchmarkMutexLockUnlock is a lock+unlock cycle of 64 goroutines over 10000 keys on one private
// server, with auto-batching on and off; it reports the script calls per cycle and the mean wait
// in a batch queue, from Client.Stats.
func BenchmarkMutexLockUnlock(b *testing.B) {
	e := newEnv(b)
	names := make([]string, 10000)
	for i := range names {
		names[i] = fmt.Sprintf("bench:%d", i)
	}
	for _, mode := range []struct {
		name    string
		noBatch bool
	}{{"batch=on", false}, {"batch=off", true}} {
		b.Run(mode.name, func(b *testing.B) {
			c := e.client(b, Options{knobs: lockhooks.Knobs{NoBatch: mode.noBatch}})
			ctx := context.Background()
			var seq atomic.Uint64
			b.ReportAllocs()
			b.SetParallelism(32)
			before := c.snapshot()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				o := c.NewOwner()
				rng := rand.New(rand.NewPCG(seq.Add(1), 2))
				for pb.Next() {
					m := *c.Mutex(names[rng.IntN(len(names))])
					if err := m.Lock(ctx, o); err != nil {
						b.Error(err)
						return
					}
					if err := m.Unlock(ctx, o); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "acq/s")
			s := c.snapshot()
			ops := 2 * float64(b.N)
			calls := ops - float64(s.BatchedOps-before.BatchedOps) + float64(s.Batches-before.Batches)
			b.ReportMetric(calls/float64(b.N), "calls/op")
			b.ReportMetric(float64(s.QueueWait.Microseconds()), "µs-queued")
		})
	}
}
