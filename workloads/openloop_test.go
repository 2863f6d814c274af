package workloads

import (
	"context"
	"errors"
	"fmt"
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// sleepCycler is a cycle of a fixed service time that records it, with no Redis.
type sleepCycler struct{ d time.Duration }

func (c sleepCycler) Cycle(ctx context.Context, rec *results.Recorder) error {
	t := time.NewTimer(c.d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	if rec != nil {
		rec.Record(c.d, 0, c.d)
	}
	return nil
}

func sleepLoop(workers int, service time.Duration, rate float64) *OpenLoop {
	l := &OpenLoop{Cyclers: make([]Cycler, workers), Rate: rate, Seed: 1}
	for i := range l.Cyclers {
		l.Cyclers[i] = sleepCycler{service}
	}
	return l
}

// tries is how many runs a test of keeping a schedule gets. Free workers take slots up to
// concurrency/rate ahead (less the attempts in flight), and a generator that the machine stalls
// for longer rightly counts late starts: on this 2-core machine shared with other test runs,
// under -race, stalls of 20ms to 200ms came at load averages of 5 to 16. The property tested is
// that the loop keeps a schedule the machine can keep, so a stalled run is logged and redone.
const tries = 3

// retry runs try until it returns "" (passed) or tries runs failed, and fails the test with
// the last reason then.
func retry(t *testing.T, try func() string) {
	t.Helper()
	var why string
	for i := range tries {
		if why = try(); why == "" {
			return
		}
		t.Logf("run %d of %d: %s", i+1, tries, why)
	}
	t.Error(why)
}

// Below the cap, every slot starts on time: the count is the schedule's, nothing late or dropped.
func TestOpenLoopKeepsTheSchedule(t *testing.T) {
	retry(t, func() string {
		l := sleepLoop(64, 100*time.Microsecond, 500)
		p := l.NewPhase(true)
		l.Run(context.Background(), p, time.Second)
		o := p.Open
		if got := results.Merge(p.Recorders...).Acquisitions; got != o.Started {
			t.Fatalf("%d cycles recorded, %d started: every started cycle finishes in the drain", got, o.Started)
		}
		// 500 slots at 0, 2ms, … 998ms, all started: one whose worker's timer wakes after the
		// phase's end still starts, since the worker was waiting for it.
		if o.Started != 500 || o.Late != 0 || o.Dropped != 0 || o.Window != time.Second {
			return fmt.Sprintf("open stats %+v; want 500 started, none late or dropped, a 1s window", o)
		}
		// Every attempt was taken on time, so every one has a start lag, apart from lateness.
		if lag := results.Merge(p.Recorders...).StartLag; lag == nil || lag.TotalCount() != o.Started-o.Late {
			t.Fatalf("start lag %v; want one value per on-time attempt (%d)", lag, o.Started-o.Late)
		}
		return ""
	})
}

// Over the cap, the schedule does not slow down: slots wait for a worker (late, latency from the
// intended start) or are never started (dropped), and every slot of the phase is one or the
// other but for those the workers were waiting for when it ended.
func TestOpenLoopOverTheCap(t *testing.T) {
	const workers, rate = 2, 1000.0
	service := 20 * time.Millisecond // the workers can do 100/s
	for _, interrupt := range []time.Duration{0, 200 * time.Millisecond} {
		t.Run(fmt.Sprintf("interrupt=%v", interrupt), func(t *testing.T) {
			l := sleepLoop(workers, service, rate)
			p := l.NewPhase(true)
			ctx := context.Background()
			if interrupt > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, interrupt)
				defer cancel()
			}
			l.Run(ctx, p, 500*time.Millisecond)
			o := p.Open
			due := int64(math.Ceil(o.Window.Seconds() * rate))
			if o.Late == 0 || o.Dropped == 0 || o.Started+o.Dropped > due || o.Started+o.Dropped < due-workers {
				t.Fatalf("open stats %+v (due %d): want late and dropped, started+dropped = due less at most %d", o, due, workers)
			}
			if interrupt > 0 && (o.Window > interrupt+50*time.Millisecond || !p.Interrupted) {
				t.Errorf("interrupted at %v: window %v, interrupted %v", interrupt, o.Window, p.Interrupted)
			}
			s := results.Merge(p.Recorders...)
			if s.Service == nil || s.Service.Max() > int64(2*service/time.Microsecond) {
				t.Fatalf("service time max %v, want about %v", s.Service.Max(), service)
			}
			// The last slot started waited for most of the phase: its latency says so.
			if lag := time.Duration(s.Acquire.Max()) * time.Microsecond; lag < o.Window/4 {
				t.Errorf("corrected acquire max %v in a %v window %d times over the cap", lag, o.Window, int(rate*service.Seconds())/workers)
			}
		})
	}
}

// openPlan is an open-loop contention plan on driver name against srv's address.
func openRun(t *testing.T, name string, addrs []string, cfg Config, opened chan struct{}) results.Run {
	t.Helper()
	d, err := drivers.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if opened != nil {
		d = &openNotifier{Driver: d, opened: opened}
	}
	run, err := Run(context.Background(), Plan{Workload: Contention{}, Config: cfg, Driver: d, Target: drivers.Config{Topology: "single", Addrs: addrs}})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// At a rate the server sustains easily the loop keeps it: achieved within 1% of the target,
// nothing late or dropped, not saturated; the timeline covers the open-loop phase. The 512
// workers take slots up to 512ms ahead (see tries). At 2000/s under -race on this loaded machine
// lockcore's service-time p99 reached 170ms to 1.5s; at 1000/s a fresh-clone CI with e2e's
// containers beside it saw 280–375ms, more than 128 workers could carry (a worker in service
// cannot start the next slot): 512 carry half a second of it, and 1000/s is a rate it sustains.
func TestOpenLoopSustainableRate(t *testing.T) {
	srv := redistest.NewServer(t)
	var run results.Run
	retry(t, func() string {
		run = openRun(t, "lockcore", srv.Addrs(), Config{Concurrency: 512, Keys: 1000, Duration: 3 * time.Second, Warmup: 500 * time.Millisecond, Rate: 1000}, nil)
		if math.Abs(run.AchievedRate/run.TargetRate-1) > 0.01 || run.Late != 0 || run.Dropped != 0 || run.Saturated {
			return fmt.Sprintf("achieved %.1f/s of %v/s, late %d, dropped %d, saturated %v, service p99 %vµs: want within 1%%, none late or dropped",
				run.AchievedRate, run.TargetRate, run.Late, run.Dropped, run.Saturated, run.ServiceLatencyUS.P99)
		}
		return ""
	})
	t.Logf("target %v/s achieved %.1f/s late %d dropped %d acq p99 %vµs service p99 %vµs errors %d",
		run.TargetRate, run.AchievedRate, run.Late, run.Dropped, run.AcquireLatencyUS.P99, run.ServiceLatencyUS.P99, run.Errors)
	if run.Pacing != results.PacingOpen || run.Arrival != "uniform" || run.TargetRate != 1000 {
		t.Errorf("pacing %q arrival %q target %v", run.Pacing, run.Arrival, run.TargetRate)
	}
	if run.Errors != 0 || run.Violations != 0 || !run.Complete {
		t.Errorf("errors %d %v, violations %d, complete %v", run.Errors, run.ErrorsByKind, run.Violations, run.Complete)
	}
	if run.ServiceLatencyUS == nil || run.Histograms.Service == "" || run.ServiceLatencyUS.P50 > run.AcquireLatencyUS.P50 {
		t.Errorf("service time %+v: want it recorded and at most the latency from the intended start %+v", run.ServiceLatencyUS, run.AcquireLatencyUS)
	}
	if run.Timeline == nil {
		t.Fatal("no timeline")
	}
	if acq, _ := run.Timeline.Totals(); acq != run.Acquisitions {
		t.Errorf("timeline adds up to %d acquisitions, the run has %d", acq, run.Acquisitions)
	}
}

// Far above what the server can do, the result says so instead of reporting a fine p99.
func TestOpenLoopAboveSaturation(t *testing.T) {
	srv := redistest.NewServer(t)
	run := openRun(t, "lockcore", srv.Addrs(), Config{Concurrency: 4, Keys: 1000, Hold: time.Millisecond, Duration: time.Second, Warmup: -1, Rate: 1_000_000, Arrival: "poisson"}, nil)
	t.Logf("target %v/s achieved %.1f/s late %d dropped %d acq p99 %vµs service p99 %vµs",
		run.TargetRate, run.AchievedRate, run.Late, run.Dropped, run.AcquireLatencyUS.P99, run.ServiceLatencyUS.P99)
	if !run.Saturated || run.Late+run.Dropped == 0 || run.AchievedRate >= run.TargetRate {
		t.Errorf("saturated %v, late %d, dropped %d, achieved %.1f of %v/s: want saturated", run.Saturated, run.Late, run.Dropped, run.AchievedRate, run.TargetRate)
	}
	// Four workers holding for 1ms cannot pass 4000/s: nearly every slot was dropped.
	if run.Dropped < 900_000 {
		t.Errorf("dropped %d of about 1000000 slots", run.Dropped)
	}
}

// Every driver runs every workload it supports in the open loop.
func TestOpenLoopOnEveryDriverAndWorkload(t *testing.T) {
	// At most two runs at once, as under go test's default -parallel on 2 cores (TestMain raises
	// it for the tests that wait): rueidislock counts an attempt slower than its 20 ms
	// TryNextAfter as a timeout, and four of these runs side by side on a loaded machine made
	// that happen twice in two runs.
	slots := make(chan struct{}, 2)
	for _, wname := range Names() {
		w, _ := Get(wname)
		for _, dname := range drivers.Names() {
			d, _ := drivers.Get(dname)
			if !d.Kinds().Has(w.Needs()) {
				continue
			}
			t.Run(wname+"/"+dname, func(t *testing.T) {
				if wname == "longhold" {
					// It needs holds longer than a lease (seconds): holds_test.go runs it.
					t.Skip("longhold needs holds longer than the lease; its own tests run it")
				}
				t.Parallel()
				slots <- struct{}{}
				defer func() { <-slots }()
				srv := redistest.NewServer(t)
				run, err := Run(context.Background(), Plan{
					Workload: w, Driver: d, Target: drivers.Config{Topology: "single", Addrs: srv.Addrs()},
					Config: Config{Concurrency: 8, Keys: 100, Duration: 600 * time.Millisecond, Warmup: -1, Rate: 200},
				})
				if errors.Is(err, drivers.ErrUnsupported) {
					t.Skipf("%s on a single server: %v", dname, err)
				}
				if err != nil {
					t.Fatal(err)
				}
				if run.Pacing != results.PacingOpen || run.Acquisitions == 0 || run.ServiceLatencyUS == nil || run.Errors != 0 || run.Violations != 0 {
					t.Errorf("pacing %q, acquisitions %d, service %v, errors %d %v, violations %d",
						run.Pacing, run.Acquisitions, run.ServiceLatencyUS, run.Errors, run.ErrorsByKind, run.Violations)
				}
			})
		}
	}
}

// The acceptance test of coordinated omission. The server is stopped (SIGSTOP) for pause during
// an open-loop run at an easy rate. Every attempt that arrived during the pause waited for its
// end: one that arrived x into it waited about pause-x, so the waits spread evenly over
// (0, pause]. Of a phase's rate*phase attempts, rate*(pause-v) waited longer than v, so the 99th
// percentile of latency from the intended start is v = pause - 0.01*phase. The service time
// from the actual start does not see the pause but for the few attempts in flight when it
// began (at most the concurrency, under 1% of the phase's), and neither does a closed loop of
// the same length: its workers, stuck, start nothing meanwhile.
func TestOpenLoopSeesAPausedServer(t *testing.T) {
	const (
		phase = 4 * time.Second
		at    = time.Second
		pause = time.Second
		rate  = 1000.0
		conc  = 16
	)
	predicted := pause - time.Duration(0.01*float64(phase))
	if conc > 0.01*rate*phase.Seconds()/2 {
		t.Fatalf("test setup: %d stuck attempts are not well under 1%% of %v", conc, rate*phase.Seconds())
	}
	pausedP99 := func(t *testing.T, cfg Config) (results.Run, time.Duration) {
		srv := redistest.NewServer(t)
		pid := srv.Pid()
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) }) // before Close's SIGTERM (LIFO)
		opened := make(chan struct{})
		paused := make(chan time.Duration, 1)
		go func() {
			<-opened // no warm-up: the phase starts as the driver is open
			time.Sleep(at)
			stop := time.Now()
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				paused <- 0
				return
			}
			time.Sleep(pause)
			syscall.Kill(pid, syscall.SIGCONT)
			paused <- time.Since(stop)
		}()
		run := openRun(t, "lockcore", srv.Addrs(), cfg, opened)
		took := <-paused
		if took == 0 {
			t.Fatal("could not stop the server")
		}
		return run, took
	}
	cfg := Config{Concurrency: conc, Keys: 1000, Duration: phase, Warmup: -1, Rate: rate}
	open, took := pausedP99(t, cfg)
	cfg.Rate = 0
	closed, _ := pausedP99(t, cfg)

	us := func(v float64) time.Duration { return time.Duration(v) * time.Microsecond }
	t.Logf("server paused %v at %v of a %v phase; predicted corrected p99 %v", took.Round(time.Millisecond), at, phase, predicted)
	t.Logf("open loop %v/s: corrected p99 %v max %v, service p99 %v max %v, late %d dropped %d achieved %.1f/s",
		rate, us(open.AcquireLatencyUS.P99), us(open.AcquireLatencyUS.Max), us(open.ServiceLatencyUS.P99), us(open.ServiceLatencyUS.Max), open.Late, open.Dropped, open.AchievedRate)
	t.Logf("closed loop: p99 %v max %v, %d acquisitions", us(closed.AcquireLatencyUS.P99), us(closed.AcquireLatencyUS.Max), closed.Acquisitions)

	// The band is generous: on a loaded machine the resumed server drains the backlog in tens
	// of milliseconds, which adds to the waits, and the signals land late.
	predicted = took - time.Duration(0.01*float64(phase))
	if p99 := us(open.AcquireLatencyUS.P99); p99 < predicted/2 || p99 > predicted+pause/2 {
		t.Errorf("corrected p99 %v, predicted %v for a %v pause", p99, predicted, took)
	}
	// Both are far under the pause; the bound is a tenth of it, not a performance figure.
	if p99 := us(open.ServiceLatencyUS.P99); p99 > pause/10 {
		t.Errorf("service-time p99 %v sees the %v pause", p99, took)
	}
	if p99 := us(closed.AcquireLatencyUS.P99); p99 > pause/10 {
		t.Errorf("closed-loop p99 %v sees the %v pause", p99, took)
	}
	// Both saw the pause in their maximum: the stuck attempts were measured.
	if us(open.ServiceLatencyUS.Max) < pause/2 || us(closed.AcquireLatencyUS.Max) < pause/2 {
		t.Errorf("a maximum misses the pause: service %v, closed loop %v", us(open.ServiceLatencyUS.Max), us(closed.AcquireLatencyUS.Max))
	}
	if open.Late == 0 || !open.Saturated || open.Errors != 0 || closed.Errors != 0 {
		t.Errorf("open loop: late %d saturated %v errors %d; closed loop errors %d", open.Late, open.Saturated, open.Errors, closed.Errors)
	}
}
