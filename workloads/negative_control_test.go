package workloads

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
)

// TestNegativeControlIsCaught runs the unsafe driver (a lease shorter than the hold, no renewal,
// an unlock that deletes whoever's key) through every workload it supports, on a real server:
// each workload's checker must count violations, or a green run of a real driver means nothing.
func TestNegativeControlIsCaught(t *testing.T) {
	d, err := drivers.Get("unsafe")
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, name := range Names() {
		w, _ := Get(name)
		if !d.Kinds().Has(w.Needs()) {
			t.Logf("%s: the control lacks %v locks", name, w.Needs())
			continue
		}
		ran++
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.NewServer(t)
			// Holds four times the lease, few keys: a second holder gets in while the first
			// still holds, every cycle that contends.
			run, err := Run(context.Background(), Plan{
				Workload: w,
				Config:   Config{Concurrency: 8, Keys: 2, Fanout: 2, ReadRatio: 0.5, Hold: 20 * time.Millisecond, Duration: 600 * time.Millisecond, Warmup: -1},
				Driver:   d,
				Target:   drivers.Config{Topology: "single", Addrs: srv.Addrs(), Lease: 5 * time.Millisecond},
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if run.Acquisitions == 0 {
				t.Fatalf("no acquisitions: errors %v", run.ErrorsByKind)
			}
			if run.Violations == 0 {
				t.Fatalf("%s: the unsafe driver ran %d acquisitions with 0 violations: this checker cannot fail", name, run.Acquisitions)
			}
			t.Logf("%s: %d violations in %d acquisitions", name, run.Violations, run.Acquisitions)
		})
	}
	if ran < 3 {
		t.Fatalf("the control ran on %d workloads; want contention, rw and multilock at least", ran)
	}
}

func TestNegativeControlIsNotInNames(t *testing.T) {
	for _, n := range drivers.Names() {
		if n == "unsafe" {
			t.Fatal("drivers.Names lists the negative control: 'every driver' loops would run it")
		}
	}
	if c := drivers.Controls(); len(c) == 0 || c[0] != "unsafe" {
		t.Fatalf("Controls() = %v, want [unsafe]", c)
	}
}
