package resource

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/referee"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// runStale runs driver's contention on one lock whose holders all outlive a 15 ms lease (held
// 45 ms, no renewal), with resource kind on a referee apart from the lock's Redis: the stale
// holder of Kleppmann's argument, every cycle. It returns the run, its resource figures and
// the double grants the referee counted.
func runStale(t *testing.T, driver, kind string) (results.Run, *results.Resource, int64) {
	t.Helper()
	data, side := redistest.NewServer(t), redistest.NewServer(t)
	d, err := drivers.Get(driver)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := workloads.Get("contention")
	ropt := referee.Options{Addr: side.Addr(), RunID: t.Name(), Process: "p0"}
	ref, err := referee.Open(t.Context(), ropt)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	res, err := Open(t.Context(), Options{Kind: kind, Referee: ropt})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	run, err := workloads.Run(t.Context(), workloads.Plan{
		Workload: w,
		Config: workloads.Config{Concurrency: 4, Keys: 1, Hold: 45 * time.Millisecond, Duration: 700 * time.Millisecond, Warmup: -1,
			Referee: ref, Resource: res},
		Driver: d,
		Target: drivers.Config{Topology: "single", Addrs: data.Addrs(), Lease: 15 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := run.Resource
	if r == nil || r.Kind != kind || r.Writes < 2*run.Acquisitions || r.Errors != 0 {
		t.Fatalf("%s: resource %+v after %d acquisitions: want two writes each, no errors", driver, r, run.Acquisitions)
	}
	n, _, err := ref.RunViolations(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s on %s: %d acquisitions, %+v, %d double grants", driver, kind, run.Acquisitions, *r, n)
	return run, r, n
}

// TestStaleHolders is the acceptance of the protected resource, on the shape the theory
// predicts rather than on counts: holders outliving their leases are double grants for every
// lock; the unsafe lock's interleaved writes corrupt a plain resource, and a fenced one cannot
// help it (no token); lockcore-fenced's late writes corrupt a plain resource too, but a fenced
// one rejects them as stale and nothing is corrupt.
func TestStaleHolders(t *testing.T) {
	for _, tc := range []struct {
		driver, kind string
		tokens       bool
		corrupt      bool // corrupt writes > 0, else 0
		stale        bool // stale writes rejected > 0, else 0
	}{
		{"unsafe", Plain, false, true, false},
		{"unsafe", Fenced, false, true, false},
		{"lockcore-fenced", Plain, true, true, false},
		{"lockcore-fenced", Fenced, true, false, true},
	} {
		t.Run(tc.driver+"/"+tc.kind, func(t *testing.T) {
			t.Parallel()
			_, r, grants := runStale(t, tc.driver, tc.kind)
			if grants == 0 {
				t.Errorf("no double grants: the holders did not outlive their leases")
			}
			if (r.TokenWrites == r.Writes) != tc.tokens || (r.TokenWrites == 0) == tc.tokens {
				t.Errorf("%d of %d writes carried a token, want all: %v", r.TokenWrites, r.Writes, tc.tokens)
			}
			if (r.CorruptWrites > 0) != tc.corrupt {
				t.Errorf("%d corrupt writes, want some: %v", r.CorruptWrites, tc.corrupt)
			}
			if (r.StaleRejected > 0) != tc.stale {
				t.Errorf("%d stale writes rejected, want some: %v", r.StaleRejected, tc.stale)
			}
			// unsafe's DEL never refuses; lockcore-fenced finds its lease gone at release.
			if (r.LeasesLostAtRelease > 0) != (tc.driver == "lockcore-fenced") {
				t.Errorf("%d leases lost at release", r.LeasesLostAtRelease)
			}
		})
	}
}
