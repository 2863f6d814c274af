package workloads

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// runSpec runs w with the driver spec on a private server and fails the test if it cannot run.
func runSpec(t *testing.T, w Workload, spec string, cfg Config, lease time.Duration) results.Run {
	t.Helper()
	d, err := drivers.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.NewServer(t)
	run, err := Run(context.Background(), Plan{
		Workload: w, Config: cfg, Driver: d,
		Target: drivers.Config{Topology: "single", Addrs: srv.Addrs(), Lease: lease},
	})
	if err != nil {
		t.Fatalf("Run %s: %v", spec, err)
	}
	return run
}

func TestReentrancyChecksEveryLevel(t *testing.T) {
	for _, spec := range []string{"lockcore", "lockcore-fair", "lockcore-fenced", "redisson", "redisson-fair"} {
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			const depth = 4
			run := runSpec(t, Reentrancy{}, spec, Config{Concurrency: 8, Keys: 2, Depth: depth, Duration: 500 * time.Millisecond, Warmup: -1}, 0)
			if run.Acquisitions == 0 || run.Errors != 0 || run.Violations != 0 {
				t.Fatalf("acquisitions %d, errors %d %v, violations %d, holds %+v", run.Acquisitions, run.Errors, run.ErrorsByKind, run.Violations, run.Holds)
			}
			h := run.Holds
			if h == nil || h.Unchecked != "" {
				t.Fatalf("hold counts not checked: %+v", h)
			}
			// Every cycle checks depth levels in and depth out; the last cycles may be cut short.
			if h.Checks < 2*depth*run.Acquisitions {
				t.Fatalf("%d checks for %d acquisitions at depth %d", h.Checks, run.Acquisitions, depth)
			}
		})
	}
}

func TestReentrancySkipsDriversWithoutIt(t *testing.T) {
	d, _ := drivers.Get("naive")
	_, err := Run(context.Background(), Plan{Workload: Reentrancy{}, Driver: d, Target: drivers.Config{Addrs: []string{"127.0.0.1:1"}}})
	if err == nil || !isUnsupported(err) {
		t.Fatalf("naive on reentrancy: %v, want ErrUnsupported", err)
	}
}

func TestLongholdRenewsOrLosesTheLease(t *testing.T) {
	cfg := Config{Concurrency: 4, Keys: 8, Hold: 700 * time.Millisecond, Duration: 1500 * time.Millisecond, Warmup: -1}
	t.Run("watchdog renews", func(t *testing.T) {
		t.Parallel()
		// A 600 ms watchdog lease renewed every 200 ms: the 1.2 s holds survive. (A 200 ms lease
		// lost a few holds under -race on a loaded 2-core machine: each renewal may take only
		// half a renewal interval, 33 ms there, and a starved process misses them.)
		cfg := cfg
		cfg.Hold, cfg.Duration = 1200*time.Millisecond, 2500*time.Millisecond
		run := runSpec(t, Longhold{}, "lockcore:watchdog=600ms", cfg, 0)
		h := run.Holds
		if run.Acquisitions == 0 || h == nil || run.Violations != 0 || run.Errors != 0 || h.LeasesLost != 0 {
			t.Fatalf("acquisitions %d, violations %d, errors %v, holds %+v", run.Acquisitions, run.Violations, run.ErrorsByKind, h)
		}
		if !h.RenewalsCounted || h.RenewalsPerAcquisition < 2 {
			t.Fatalf("700 ms holds on a 200 ms lease: %+v, want several renewals per acquisition", h)
		}
	})
	for _, spec := range []string{"lockcore", "naive", "redisson"} {
		t.Run(spec+" explicit lease runs out", func(t *testing.T) {
			t.Parallel()
			// An explicit lease is not renewed: every 700 ms hold outlives its 200 ms lease.
			run := runSpec(t, Longhold{}, spec, cfg, 200*time.Millisecond)
			// A cycle whose release is refused is counted as an error, not an acquisition: with
			// every lease lost there may be none.
			if run.Holds == nil || run.Holds.LeasesLost == 0 || run.Violations == 0 {
				t.Fatalf("acquisitions %d, violations %d, holds %+v: lost leases not detected", run.Acquisitions, run.Violations, run.Holds)
			}
		})
	}
}

func TestLongholdNeedsAHold(t *testing.T) {
	err := CheckConfig(Longhold{}, Config{})
	if err == nil || !isBadConfig(err) {
		t.Fatalf("longhold without a hold: %v, want ErrBadConfig", err)
	}
	if err := CheckConfig(Reentrancy{}, Config{Depth: -1}); err == nil || !isBadConfig(err) {
		t.Fatalf("depth -1: %v, want ErrBadConfig", err)
	}
	if err := CheckConfig(Reentrancy{}, Config{Depth: MaxDepth + 1}); err == nil {
		t.Fatal("depth above MaxDepth accepted")
	}
}
