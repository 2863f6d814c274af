package lockcore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
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
			b.ReportAllocs()
			before := c.snapshot()
			b.ResetTimer()
			lockUnlockParallel(b, c, names)
			s := c.snapshot()
			ops := 2 * float64(b.N)
			calls := ops - float64(s.BatchedOps-before.BatchedOps) + float64(s.Batches-before.Batches)
			b.ReportMetric(calls/float64(b.N), "calls/op")
			b.ReportMetric(float64(s.QueueWait.Microseconds()), "µs-queued")
		})
	}
}

// BenchmarkMutexLockUnlockCluster is BenchmarkMutexLockUnlock on a private 3-master cluster
// with a replica each, unsynced and synced, with batches per master (node batches, the default),
// per hash slot (as before cluster.go) and off; besides acq/s it reports the EVALSHA and WAIT
// calls per acquisition, from the masters' INFO commandstats, and the masters' CPU time per
// acquisition (used_cpu_user + used_cpu_sys; the replicas' is left out).
func BenchmarkMutexLockUnlockCluster(b *testing.B) {
	e, _, _ := clusterEnv(b)
	names := make([]string, 10000)
	for i := range names {
		names[i] = fmt.Sprintf("bench:%d", i)
	}
	for _, sm := range []SyncMode{SyncOff, SyncWait} {
		for _, mode := range []struct {
			name    string
			perSlot bool
			noBatch bool
		}{{"node", false, false}, {"slot", true, false}, {"off", false, true}} {
			b.Run(fmt.Sprintf("sync=%v/batch=%s", sm, mode.name), func(b *testing.B) {
				c := e.client(b, Options{Sync: sm, slotBatches: mode.perSlot, knobs: lockhooks.Knobs{NoBatch: mode.noBatch}})
				b.ReportAllocs()
				evalsha, wait, cpu := e.calls(b, "evalsha"), e.calls(b, "wait"), e.redisCPU(b)
				b.ResetTimer()
				lockUnlockParallel(b, c, names)
				b.StopTimer()
				b.ReportMetric(float64(e.calls(b, "evalsha")-evalsha)/float64(b.N), "evalsha/acq")
				b.ReportMetric(float64(e.calls(b, "wait")-wait)/float64(b.N), "wait/acq")
				b.ReportMetric(float64((e.redisCPU(b)-cpu).Microseconds())/float64(b.N), "master-µs/acq")
			})
		}
	}
}

// redisCPU returns the CPU time the env's masters have used (INFO cpu), summed.
func (e *testEnv) redisCPU(t testing.TB) time.Duration {
	t.Helper()
	var total float64
	for _, res := range e.onMasters(t, "INFO", "cpu") {
		info, err := res.ToString()
		if err != nil {
			t.Fatalf("INFO cpu: %v", err)
		}
		for _, f := range []string{"used_cpu_user", "used_cpu_sys"} {
			v, _ := infoField(info, f)
			x, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			total += x
		}
	}
	return time.Duration(total * float64(time.Second))
}

// lockUnlockParallel locks and unlocks b.N Mutexes of c, each on a name picked at random from
// names, from 32 goroutines per GOMAXPROCS, each with an Owner of its own, and reports acq/s.
func lockUnlockParallel(b *testing.B, c *Client, names []string) {
	ctx := context.Background()
	var seq atomic.Uint64
	b.SetParallelism(32)
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
}
