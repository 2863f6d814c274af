package workloads

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Plan is one workload run on one driver.
type Plan struct {
	Workload Workload
	Config   Config
	Driver   drivers.Driver
	Target   drivers.Config
	// CommandStats snapshots the server's INFO commandstats; nil leaves commands unmeasured.
	CommandStats func(ctx context.Context) (results.CommandStats, error)
	// Progress, if set, is called about once a second during each phase.
	Progress func(Progress)
}

// Progress is a running phase's state, for progress output.
type Progress struct {
	Driver       string
	Phase        string // "warmup" or "measure"
	Elapsed      time.Duration
	Planned      time.Duration
	Acquisitions int64
}

// Run executes the plan: open a fresh client, warm up unrecorded, measure, close. An interrupted
// run (ctx ended) still returns what was measured, with Complete false. The error is for runs
// that could not start (bad config, driver cannot connect).
func Run(ctx context.Context, p Plan) (results.Run, error) {
	cfg := p.Config
	cfg.Fill()
	run := results.Run{
		Driver:      p.Driver.Name(),
		Workload:    p.Workload.Name(),
		Topology:    p.Target.Topology,
		Addrs:       p.Target.Addrs,
		Concurrency: cfg.Concurrency,
		Keys:        cfg.Keys,
		KeyDist:     cfg.KeyDist,
		HoldUS:      float64(cfg.Hold) / float64(time.Microsecond),
		Seed:        cfg.Seed,
		WarmupS:     cfg.Warmup.Seconds(),
		StartedAt:   time.Now().UTC(),
	}
	if err := cfg.Validate(); err != nil {
		return run, err
	}
	if !p.Driver.Kinds().Has(p.Workload.Needs()) {
		return run, fmt.Errorf("driver %s cannot run workload %s: it needs %v locks, the driver has %v",
			p.Driver.Name(), p.Workload.Name(), p.Workload.Needs(), p.Driver.Kinds())
	}
	target := p.Target
	target.Concurrency = cfg.Concurrency
	locker, err := p.Driver.Open(ctx, target)
	if err != nil {
		return run, fmt.Errorf("driver %s: %w", p.Driver.Name(), err)
	}
	defer locker.Close()
	run.DriverSettings = locker.Settings()

	// Releases outlive the phase by a grace period, so a run that ends mid-cycle gives its locks
	// back, but a dead server cannot hold the run hostage.
	release, cancelRelease := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRelease()
	stopGrace := context.AfterFunc(ctx, func() {
		time.AfterFunc(DefaultReleaseTimeout, cancelRelease)
	})
	defer stopGrace()

	inst := p.Workload.Start(&cfg)
	loop := &ClosedLoop{Cyclers: make([]Cycler, cfg.Concurrency)}
	for i := range loop.Cyclers {
		loop.Cyclers[i] = inst.NewCycler(i, locker.NewWorker(), release)
	}

	if cfg.Warmup > 0 {
		ph := loop.NewPhase(false)
		watch(p, ph, "warmup", cfg.Warmup, func() { loop.Run(ctx, ph, cfg.Warmup) })
		if ph.Interrupted {
			run.Violations = inst.Violations()
			run.Incomplete = "interrupted during warm-up"
			return run, run.Fill(results.Merge(), 0)
		}
	}

	var before results.CommandStats
	var statsErr error
	if p.CommandStats != nil {
		before, statsErr = p.CommandStats(ctx)
	}
	ph := loop.NewPhase(true)
	watch(p, ph, "measure", cfg.Duration, func() { loop.Run(ctx, ph, cfg.Duration) })
	if err := run.Fill(results.Merge(ph.Recorders...), ph.Elapsed); err != nil {
		return run, err
	}
	run.Violations = inst.Violations()
	run.Complete = !ph.Interrupted
	if ph.Interrupted {
		run.Incomplete = fmt.Sprintf("interrupted after %.1fs of %v", ph.Elapsed.Seconds(), cfg.Duration)
	}
	if p.CommandStats != nil && statsErr == nil {
		// Read the server even when interrupted: the counts are part of what was measured.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		after, err := p.CommandStats(sctx)
		cancel()
		if err == nil {
			run.SetCommands(after.Sub(before))
		}
	}
	return run, nil
}

// watch runs fn and reports progress once a second meanwhile.
func watch(p Plan, ph *Phase, name string, planned time.Duration, fn func()) {
	if p.Progress == nil {
		fn()
		return
	}
	start := time.Now()
	stop := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.Progress(Progress{Driver: p.Driver.Name(), Phase: name, Elapsed: time.Since(start), Planned: planned, Acquisitions: ph.Done()})
			}
		}
	}()
	fn()
	close(stop)
	<-exited
}
