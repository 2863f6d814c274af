package workloads

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// stuckRelease is a driver whose releases hang once stuck is set, until their ctx ends: a
// server that stopped answering, without any client timeout to save the run.
type stuckRelease struct{ stuck atomic.Bool }

func (d *stuckRelease) Name() string                                                 { return "stuck" }
func (d *stuckRelease) Kinds() drivers.Kind                                          { return drivers.KindMutex }
func (d *stuckRelease) Open(context.Context, drivers.Config) (drivers.Locker, error) { return d, nil }
func (d *stuckRelease) NewWorker() drivers.Worker                                    { return d }
func (d *stuckRelease) Settings() map[string]string                                  { return nil }
func (d *stuckRelease) Close() error                                                 { return nil }
func (d *stuckRelease) Lock(context.Context, string) error                           { return nil }
func (d *stuckRelease) Unlock(ctx context.Context, _ string) error {
	if !d.stuck.Load() {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

// The release grace counts from the end of the measured phase even when the caller's ctx never
// ends: releases hanging on a stalled server cannot keep the run going.
func TestReleaseGraceEndsStuckReleasesAfterThePhase(t *testing.T) {
	t.Parallel() // no server; it waits out the 5 s release grace
	d := &stuckRelease{}
	const phase = 300 * time.Millisecond
	time.AfterFunc(100*time.Millisecond, func() { d.stuck.Store(true) })
	start := time.Now()
	run, err := Run(context.Background(), Plan{
		Workload: Contention{},
		Config:   Config{Concurrency: 4, Keys: 10, Duration: phase, Warmup: -1, Hold: time.Millisecond},
		Driver:   d,
	})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	// Without the grace the run would never end; the bound is the phase plus the grace plus slack.
	if took > phase+DefaultReleaseTimeout+3*time.Second {
		t.Fatalf("run took %v", took)
	}
	if run.ErrorsByKind["release"] == 0 {
		t.Fatalf("stuck releases not counted: %v", run.ErrorsByKind)
	}
}
