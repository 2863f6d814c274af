//go:build unix

package workloads

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/metrics"
	"runtime/trace"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// BenchmarkOpenLoopLight is issue 44's breakdown of an acquisition at light load: the open loop
// at 250/s and 1000/s (64 workers, 10000 keys, contention with no hold, as lockbench run's
// defaults) against a private redis-server, lockcore and naive. b.N is the number of slots, so
// -benchtime 2000x runs 2000 acquisitions (8 s at 250/s). Besides the latencies, which a loaded
// machine moves, it reports what load moves less, per acquisition:
//
//   - cpu-us/acq: the process's CPU time (getrusage: user + system, every thread);
//   - vcsw/acq, ivcsw/acq: the process's voluntary context switches (a thread that blocked: in
//     epoll_pwait, futex or a read; each one a later wake-up) and involuntary ones (preempted);
//   - runs/acq: goroutine runs (from runnable to running; runtime/metrics
//     /sched/latencies:seconds samples one in 8, scaled back), and sched-p99-us, the p99 of
//     the time a runnable goroutine waited for a processor;
//   - the pacer's own cost: timer-wakes/acq (Go timer), fine-wakes/acq (timerfd),
//     spins/acq and spin-us/acq (polling the clock; see package pacing).
//
// With LOCKBENCH_TRACE=path it writes a Go execution trace of the last measured phase there
// (go tool trace -pprof=sched path: where goroutines waited to run), each Lock and Unlock a
// region and each attempt's intended start a log event, which scripts/trace-phases.py turns
// into the time of each phase of an acquisition (run one sub-benchmark at a time: each
// overwrites the file). Run it on a quiet machine for latencies; the counts hold on a busy one:
//
//	go test -run '^$' -bench OpenLoopLight -benchtime 2000x ./workloads
//
// LOCKBENCH_REDIS=host:port uses that server instead (never one with data: the run writes and
// deletes its lock keys), so that it can be placed as --pin auto places one: e.g. the server
// started with taskset -c 0, the benchmark with taskset -c 1 and GOMAXPROCS=1.
func BenchmarkOpenLoopLight(b *testing.B) {
	var addrs []string
	if addr := os.Getenv("LOCKBENCH_REDIS"); addr != "" {
		addrs = []string{addr}
	} else {
		addrs = redistest.NewServer(b).Addrs()
	}
	for _, name := range []string{"lockcore", "naive"} {
		for _, rate := range []float64{250, 1000} {
			b.Run(fmt.Sprintf("%s/rate=%g", name, rate), func(b *testing.B) {
				benchOpenLoop(b, name, addrs, rate)
			})
		}
	}
}

func benchOpenLoop(b *testing.B, name string, addrs []string, rate float64) {
	d, err := drivers.Get(name)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Rate: rate}
	cfg.Fill()
	w := Contention{}
	locker, err := d.Open(context.Background(), drivers.Config{Topology: "single", Addrs: addrs, Concurrency: cfg.Concurrency, Needs: w.Needs()})
	if err != nil {
		b.Fatal(err)
	}
	defer locker.Close()
	inst := w.Start(&cfg)
	tracing := os.Getenv("LOCKBENCH_TRACE") != ""
	cyclers := make([]Cycler, cfg.Concurrency)
	for i := range cyclers {
		var w drivers.Worker = locker.NewWorker()
		if tracing {
			w = tracedWorker{w}
		}
		cyclers[i] = inst.NewCycler(i, w, context.Background())
	}
	loop := &OpenLoop{Cyclers: cyclers, Rate: rate, Arrival: cfg.Arrival, Seed: 1}
	loop.Run(context.Background(), loop.NewPhase(false), 500*time.Millisecond) // connections, scripts

	phase := time.Duration(float64(b.N) / rate * float64(time.Second))
	before := readLight()
	if path := os.Getenv("LOCKBENCH_TRACE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			b.Fatal(err)
		}
		defer trace.Stop()
	}
	b.ResetTimer()
	ph := loop.NewPhase(true)
	loop.Run(context.Background(), ph, phase)
	b.StopTimer()
	after := readLight()

	run := results.Merge(ph.Recorders...)
	n := float64(run.Acquisitions)
	if n == 0 {
		b.Fatalf("no acquisition in %v at %v/s", phase, rate)
	}
	if inst.Violations() != 0 {
		b.Fatalf("%d violations", inst.Violations())
	}
	o := ph.Open
	b.ReportMetric(float64((after.cpu-before.cpu).Microseconds())/n, "cpu-us/acq")
	b.ReportMetric(float64(after.vcsw-before.vcsw)/n, "vcsw/acq")
	b.ReportMetric(float64(after.ivcsw-before.ivcsw)/n, "ivcsw/acq")
	runs, p99 := schedDelta(before.sched, after.sched)
	b.ReportMetric(8*runs/n, "runs/acq") // one run in 8 is sampled (runtime's gTrackingPeriod)
	b.ReportMetric(p99*1e6, "sched-p99-us")
	b.ReportMetric(float64(o.Waits.TimerWakes)/n, "timer-wakes/acq")
	b.ReportMetric(float64(o.Waits.FineWakes)/n, "fine-wakes/acq")
	b.ReportMetric(float64(o.Waits.Spins)/n, "spins/acq")
	b.ReportMetric(float64(o.SpinTime.Microseconds())/n, "spin-us/acq")
	b.ReportMetric(float64(run.Acquire.ValueAtQuantile(50)), "acq-p50-us")
	b.ReportMetric(float64(run.Acquire.ValueAtQuantile(99)), "acq-p99-us")
	if run.StartLag != nil {
		b.ReportMetric(float64(run.StartLag.ValueAtQuantile(99)), "lag-p99-us")
	}
	if run.Service != nil {
		b.ReportMetric(float64(run.Service.ValueAtQuantile(99)), "service-p99-us")
	}
	b.ReportMetric(0, "ns/op") // the phase's length is the schedule's, not a cost
}

// lightSample is what benchOpenLoop reads before and after the measured phase.
type lightSample struct {
	cpu         time.Duration
	vcsw, ivcsw int64
	sched       *metrics.Float64Histogram
}

func readLight() lightSample {
	var s lightSample
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		s.vcsw, s.ivcsw = int64(ru.Nvcsw), int64(ru.Nivcsw)
	}
	m := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(m)
	if m[0].Value.Kind() == metrics.KindFloat64Histogram {
		s.sched = m[0].Value.Float64Histogram()
	}
	return s
}

// schedDelta returns how many scheduling latencies were sampled between a and b, and their p99
// in seconds (a bucket's upper bound).
func schedDelta(a, b *metrics.Float64Histogram) (n, p99 float64) {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) {
		return 0, 0
	}
	d := make([]uint64, len(b.Counts))
	var total uint64
	for i := range b.Counts {
		d[i] = b.Counts[i] - a.Counts[i]
		total += d[i]
	}
	var seen uint64
	for i, c := range d {
		seen += c
		if float64(seen) >= 0.99*float64(total) {
			p99 = b.Buckets[i+1]
			if math.IsInf(p99, 1) {
				p99 = b.Buckets[i]
			}
			break
		}
	}
	return float64(total), p99
}

// tracedWorker marks each Lock and Unlock as a region of the execution trace ("lock",
// "unlock"), so that scripts/trace-phases.py can tell an acquisition's events from the
// release's. It hides the worker's optional interfaces: the contention workload uses none of
// them for lockcore and naive.
type tracedWorker struct{ drivers.Worker }

func (w tracedWorker) Lock(ctx context.Context, name string) error {
	defer trace.StartRegion(ctx, "lock").End()
	return w.Worker.Lock(ctx, name)
}

func (w tracedWorker) Unlock(ctx context.Context, name string) error {
	defer trace.StartRegion(ctx, "unlock").End()
	return w.Worker.Unlock(ctx, name)
}
