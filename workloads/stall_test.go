package workloads

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Stalls that do not fit the phase, or each other, are bad config (Run checks them so).
func TestCheckStalls(t *testing.T) {
	s := func(at, dur time.Duration) Stall { return Stall{At: at, For: dur, Spec: "stall"} }
	for _, tc := range []struct {
		stalls []Stall
		says   string // "" = valid
	}{
		{[]Stall{s(time.Second, time.Second)}, ""},
		{[]Stall{s(0, 2*time.Second)}, ""},
		{[]Stall{s(0, time.Second), s(time.Second, time.Second)}, ""},
		{[]Stall{s(time.Second, 0)}, "positive duration"},
		{[]Stall{s(-time.Second, time.Second)}, "want a time from 0"},
		{[]Stall{s(time.Second, 1500*time.Millisecond)}, "ends at 2.5s, after the measured phase of 2s"},
		{[]Stall{s(0, time.Second), s(500*time.Millisecond, time.Second)}, "overlap"},
	} {
		err := checkStalls(tc.stalls, 2*time.Second)
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("%+v: %v; want valid", tc.stalls, err)
		case tc.says != "" && (!errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("%+v: %v; want ErrBadConfig saying %q", tc.stalls, err, tc.says)
		}
	}
}

// Stall runs: contention on a few keys, where at stallAt into the phase some workers hold a lock,
// and those stay in their critical section for stallFor, well past the lease below.
const (
	stallPhase = 2 * time.Second
	stallAt    = 500 * time.Millisecond
	stallFor   = time.Second
	stallLease = 200 * time.Millisecond
)

// A stall longer than the lease: with lockcore's watchdog renewing the stalled holders' locks
// (lease stallLease, renewed every third of it) nobody else is granted them, and mutual
// exclusion holds; with the same lease given explicitly, which lockcore does not renew, the
// locks expire under the stalled holders, other workers take them, and the checker counts two
// holders at once, and the stalled holders find at release that their lease is gone. Either way
// the stall fired and kept some holders (the ones holding at its start).
func TestStallWithAndWithoutWatchdog(t *testing.T) {
	for _, tc := range []struct {
		name     string
		driver   string
		lease    time.Duration
		violates bool
	}{
		{"watchdog", "lockcore:watchdog=" + stallLease.String(), 0, false},
		{"lease not renewed", "lockcore", stallLease, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := drivers.Parse(tc.driver)
			if err != nil {
				t.Fatal(err)
			}
			srv := redistest.NewServer(t)
			// A stall that catches no holder (a loaded CI machine that did not run the workers
			// around stallAt: a fresh-clone run saw 0 holders stalled) tests nothing: up to three
			// runs, until one catches a holder; the last is judged.
			var run results.Run
			var f results.Fault
			stalled := int64(-1)
			for attempt := 1; attempt <= 3; attempt++ {
				var err error
				run, err = Run(context.Background(), Plan{Workload: Contention{}, Driver: d,
					Config: Config{Concurrency: 8, Keys: 4, Hold: 5 * time.Millisecond, Duration: stallPhase, Warmup: -1},
					Target: drivers.Config{Topology: "single", Addrs: srv.Addrs(), Lease: tc.lease},
					Stalls: []Stall{{At: stallAt, For: stallFor, Spec: "stall:gen1@500ms+1s", Node: "gen1"}}})
				if err != nil {
					t.Fatal(err)
				}
				if len(run.Faults) != 1 {
					t.Fatalf("faults %+v; want the stall", run.Faults)
				}
				f = run.Faults[0]
				if f.StalledWorkers != nil {
					stalled = *f.StalledWorkers
				}
				if stalled >= 1 {
					break
				}
				t.Logf("run %d: the stall caught no holder; again", attempt)
			}
			t.Logf("%s: acquisitions %d, violations %d, errors %v, %d holders stalled, cycle max %.0fus",
				tc.driver, run.Acquisitions, run.Violations, run.ErrorsByKind, stalled, run.CycleLatencyUS.Max)
			if !f.Fired || f.Action != "stall" || f.Node != "gen1" || f.StalledWorkers == nil || *f.StalledWorkers < 1 || f.LastedS != stallFor.Seconds() {
				t.Errorf("stall %+v; want fired, lasting %v, with holders stalled", f, stallFor)
			}
			if tc.violates {
				if run.Violations == 0 || run.ErrorsByKind["lease_lost"] == 0 {
					t.Errorf("violations %d, errors %v with a %v lease that nothing renews and a %v stall; want violations and leases lost",
						run.Violations, run.ErrorsByKind, stallLease, stallFor)
				}
				return
			}
			if run.Violations != 0 || run.ErrorsByKind["lease_lost"] != 0 {
				t.Errorf("violations %d, errors %v with the watchdog renewing the stalled holders' locks", run.Violations, run.ErrorsByKind)
			}
			// A stalled cycle took its lock before the stall and released it, still its own,
			// after. (A cycle whose lease was lost records no latency.)
			if min := 0.9 * float64(stallFor/time.Microsecond); run.CycleLatencyUS.Max < min {
				t.Errorf("longest cycle %.0fus; want one of at least %.0fus, held through the stall", run.CycleLatencyUS.Max, min)
			}
		})
	}
}

// Without stalls a run records no faults, and a stall the phase never reached is recorded as not
// fired.
func TestStallRecordNotReached(t *testing.T) {
	g := newStallGate([]Stall{{At: time.Second, For: time.Second, Spec: "stall:gen1@1s+1s", Node: "gen1"}})
	var run results.Run
	g.record(&run, 500*time.Millisecond)
	if len(run.Faults) != 1 || run.Faults[0].Fired || run.Faults[0].StalledWorkers != nil {
		t.Errorf("faults %+v; want the stall, not fired", run.Faults)
	}
}
