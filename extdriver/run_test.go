package extdriver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/workloads"
)

// TestRunEndsWhenAdapterDies: a run whose adapter dies ends its phase, with the error counted
// and quoted, instead of counting the same failure until its (long) duration runs out.
func TestRunEndsWhenAdapterDies(t *testing.T) {
	srv := redistest.NewServer(t)
	w, err := workloads.Get("contention")
	if err != nil {
		t.Fatal(err)
	}
	d := selfDriver(t, "null")
	d.Options = func(o *extdriver.Options) { o.Env = append(o.Env, envSelf+"=null", envFault+"=die-after=500") }
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	run, err := workloads.Run(ctx, workloads.Plan{Workload: w, Driver: d,
		Config: workloads.Config{Concurrency: 8, Keys: 16, Duration: time.Hour, Warmup: -1},
		Target: drivers.Config{Topology: compose.KindSingle, Addrs: srv.Addrs(), Concurrency: 8}})
	if ctx.Err() != nil {
		t.Fatalf("the run did not end within %v of its adapter's death (its duration is an hour)", bound)
	}
	_ = err // the run's own error, if any, is not the subject: its counts are
	if run.Errors == 0 {
		t.Fatalf("no error counted: %+v", run)
	}
	var quoted bool
	for _, msgs := range run.ErrorSamples {
		for _, m := range msgs {
			quoted = quoted || strings.Contains(m, "exit status 3") && strings.Contains(m, "die-after=500: exiting")
		}
	}
	if !quoted {
		t.Fatalf("no error sample quotes the exit and the adapter's stderr: %v", run.ErrorSamples)
	}
}
