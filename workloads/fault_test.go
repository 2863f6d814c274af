package workloads

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
)

// A server that dies mid-run must not hang the run: errors are counted, the phase ends on time,
// and the result keeps what was measured before the fault.
func TestServerKilledMidRun(t *testing.T) {
	for _, name := range []string{"lockcore", "naive"} {
		t.Run(name, func(t *testing.T) {
			srv := redistest.NewServer(t)
			d, _ := drivers.Get(name)
			time.AfterFunc(700*time.Millisecond, func() { srv.Close() })
			start := time.Now()
			run, err := Run(context.Background(), Plan{
				Workload: Contention{},
				Config:   Config{Concurrency: 16, Keys: 100, Duration: 2 * time.Second, Warmup: -1},
				Driver:   d,
				Target:   drivers.Config{Topology: "single", Addrs: srv.Addrs()},
			})
			if err != nil {
				t.Fatal(err)
			}
			// Generous bound: the phase is 2 s; a hang would be the client's 10 s+ timeouts or forever.
			if took := time.Since(start); took > 8*time.Second {
				t.Fatalf("run took %v after the server died", took)
			}
			if run.Acquisitions == 0 || run.Errors == 0 {
				t.Fatalf("acquisitions %d, errors %d (%v): want both before and after the fault", run.Acquisitions, run.Errors, run.ErrorsByKind)
			}
			// The timeline shows the fault: locks in the first second, then only errors.
			tl := run.Timeline
			if tl == nil || len(tl.Points) < 2 {
				t.Fatalf("timeline %+v: want a point per second of the 2 s phase", tl)
			}
			if acq, errs := tl.Totals(); acq != run.Acquisitions || errs != run.Errors {
				t.Errorf("timeline adds up to %d acquisitions, %d errors; the run has %d, %d", acq, errs, run.Acquisitions, run.Errors)
			}
			first, second := tl.Points[0], tl.Points[1]
			if first.Acquisitions == 0 || second.Acquisitions != 0 || second.Errors == 0 {
				t.Errorf("second 1: %d acquisitions; second 2: %d acquisitions, %d errors; want locks before the kill and only errors after",
					first.Acquisitions, second.Acquisitions, second.Errors)
			}
			// The backoff keeps the error count to a countable stream, not a busy loop.
			if perWorker := run.Errors / 16; perWorker > 2*int64(2*time.Second/ErrorBackoff) {
				t.Fatalf("%d errors per worker in 2 s: workers spin on a dead server", perWorker)
			}
		})
	}
}
