package workloads

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

func TestConfigValidateReadRatioAndFanout(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{}, true},
		{"all reads", Config{ReadRatio: 1}, true},
		{"negative means no reads", Config{ReadRatio: -1}, true},
		{"read ratio above 1", Config{ReadRatio: 1.5}, false},
		{"read ratio NaN", Config{ReadRatio: math.NaN()}, false},
		{"fanout of every key", Config{Keys: 4, Fanout: 4}, true},
		{"default fanout shrinks to the keys", Config{Keys: 2}, true},
		{"fanout above the keys", Config{Keys: 4, Fanout: 5}, false},
		{"negative fanout", Config{Fanout: -1}, false},
		{"fanout above MaxFanout", Config{Fanout: MaxFanout + 1}, false},
	}
	for _, tc := range cases {
		c := tc.cfg
		c.Fill()
		err := c.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: error %v does not wrap ErrBadConfig", tc.name, err)
		}
	}
	c := Config{ReadRatio: -1, Keys: 2}
	c.Fill()
	if c.ReadRatio != 0 || c.Fanout != 2 {
		t.Errorf("Fill: read ratio %v, fanout %d; want 0 and 2", c.ReadRatio, c.Fanout)
	}
}

func TestRWCheckerCountsWritersNotAlone(t *testing.T) {
	c := NewRWChecker(2)
	c.EnterRead(0, 0)
	c.EnterRead(0, 0)
	c.EnterWrite(1, 0)
	if c.Violations() != 0 || c.MaxReaders() != 2 {
		t.Fatalf("two readers of key 0, a writer of key 1: %d violations, max readers %d", c.Violations(), c.MaxReaders())
	}
	c.EnterWrite(0, 0) // a writer among readers
	if c.Violations() != 1 {
		t.Fatalf("writer among readers: %d violations, want 1", c.Violations())
	}
	c.ExitWrite(0, 0)
	c.ExitRead(0, 0)
	c.ExitRead(0, 0)
	c.EnterRead(1, 0) // a reader beside the writer of key 1
	if c.Violations() != 2 {
		t.Fatalf("reader beside a writer: %d violations, want 2", c.Violations())
	}
	c.ExitRead(1, 0)
	c.EnterWrite(1, 0) // a second writer
	if c.Violations() != 3 {
		t.Fatalf("two writers: %d violations, want 3", c.Violations())
	}
	c.ExitWrite(1, 0)
	c.ExitWrite(1, 0)
	c.EnterWrite(1, 0)
	c.ExitWrite(1, 0)
	c.EnterRead(1, 0)
	if c.Violations() != 3 {
		t.Fatalf("one after another counted as a violation: %d", c.Violations())
	}
}

func TestFenceCheckerWantsRisingTokens(t *testing.T) {
	c := NewFenceChecker(2)
	for _, tok := range []int64{1, 2, 5} {
		if !c.Observe(0, tok) {
			t.Fatalf("rising token %d refused", tok)
		}
	}
	if !c.Observe(1, 3) {
		t.Fatal("keys do not share tokens")
	}
	for _, tok := range []int64{5, 4} {
		if c.Observe(0, tok) {
			t.Fatalf("token %d after 5 accepted", tok)
		}
	}
	if c.Violations() != 2 {
		t.Fatalf("%d violations, want 2", c.Violations())
	}
}

func TestMultilockPicksDistinctKeys(t *testing.T) {
	for _, tc := range []struct {
		dist         string
		keys, fanout int
	}{{DistUniform, 100, 3}, {DistZipf, 50, 8}, {DistZipf, 5, 5}, {DistUniform, 1, 1}} {
		cfg := Config{Keys: tc.keys, KeyDist: tc.dist, Fanout: tc.fanout, ZipfS: 3}
		cfg.Fill()
		inst := Multilock{}.Start(&cfg).(*multilockRun)
		cy := inst.NewCycler(0, fakeMulti{}, context.Background()).(*multilockCycler)
		seen := map[int]bool{}
		for range 500 {
			cy.pick()
			if len(cy.set) != tc.fanout || len(cy.setNames) != tc.fanout {
				t.Fatalf("%+v: picked %v", tc, cy.set)
			}
			s := slices.Clone(cy.set)
			slices.Sort(s)
			if len(slices.Compact(s)) != tc.fanout {
				t.Fatalf("%+v: keys not distinct: %v", tc, cy.set)
			}
			for i, k := range cy.set {
				seen[k] = true
				if cy.setNames[i] != inst.names[k] {
					t.Fatalf("name %q for key %d", cy.setNames[i], k)
				}
			}
		}
		if tc.dist == DistUniform && tc.keys > tc.fanout && len(seen) < tc.keys/2 {
			t.Errorf("%+v: only %d keys ever picked: sets barely overlap and barely vary", tc, len(seen))
		}
	}
}

// runPlan runs workload w with driver d on target against a private server, if target has no
// addresses, measuring its commands.
func runPlan(t *testing.T, w Workload, d drivers.Driver, target drivers.Config, cfg Config) (results.Run, rueidis.Client) {
	t.Helper()
	if len(target.Addrs) == 0 {
		srv := redistest.NewServer(t)
		target.Topology, target.Addrs = "single", srv.Addrs()
	}
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: target.Addrs, DisableCache: true, ForceSingleClient: target.Topology == "single"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rdb.Close)
	run, err := Run(context.Background(), Plan{Workload: w, Config: cfg, Driver: d, Target: target})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return run, rdb
}

// safe fails the test unless run completed with acquisitions and without errors or violations.
func safe(t *testing.T, run results.Run) {
	t.Helper()
	if !run.Complete || run.Acquisitions == 0 {
		t.Fatalf("run: complete=%v acquisitions=%d", run.Complete, run.Acquisitions)
	}
	if run.Violations != 0 || run.Errors != 0 {
		t.Fatalf("violations %d, errors %d (%v)", run.Violations, run.Errors, run.ErrorsByKind)
	}
}

// keys lists the keys in the server of rdb.
func keys(t *testing.T, rdb rueidis.Client) []string {
	t.Helper()
	ks, err := rdb.Do(context.Background(), rdb.B().Keys().Pattern("*").Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func lockcoreDriver(t *testing.T, name string) drivers.Driver {
	t.Helper()
	d, err := drivers.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// short is a run that contends: few keys, a hold, a second.
var short = Config{Concurrency: 8, Keys: 4, Hold: 200 * time.Microsecond, Duration: time.Second, Warmup: 200 * time.Millisecond}

func TestRWOnLockcore(t *testing.T) {
	// The runner says which kinds the run needs, so lockcore's Lock is the RWMutex write lock.
	run, rdb := runPlan(t, RW{}, lockcoreDriver(t, "lockcore"), drivers.Config{Needs: RW{}.Needs()}, short)
	safe(t, run)
	// 90% reads: some cycle read, so the field is filled; plain contention leaves it out.
	if run.MaxConcurrentReaders < 1 || run.FencingViolations != 0 {
		t.Errorf("max concurrent readers %d, fencing violations %d; want ≥1 and 0", run.MaxConcurrentReaders, run.FencingViolations)
	}
	if !strings.HasPrefix(run.DriverSettings["lock"], "RWMutex") {
		t.Errorf("lock setting %q, want the RWMutex", run.DriverSettings["lock"])
	}
	if ks := keys(t, rdb); len(ks) != 0 {
		t.Fatalf("keys left after the run: %v", ks)
	}
}

// TestRWReadersShare runs only readers on one key: they must be seen inside together, and the
// result must say so.
func TestRWReadersShare(t *testing.T) {
	cfg := Config{Concurrency: 4, Keys: 1, Hold: 2 * time.Millisecond, ReadRatio: 1, Duration: 300 * time.Millisecond, Warmup: -1}
	run, rdb := runPlan(t, RW{}, lockcoreDriver(t, "lockcore"), drivers.Config{Needs: RW{}.Needs()}, cfg)
	safe(t, run)
	if run.MaxConcurrentReaders < 2 {
		t.Fatalf("at most %d reader inside at once: readers do not share", run.MaxConcurrentReaders)
	}
	if run.MaxConcurrentReaders > int64(cfg.Concurrency) {
		t.Fatalf("%d readers inside at once, more than the %d workers", run.MaxConcurrentReaders, cfg.Concurrency)
	}
	if ks := keys(t, rdb); len(ks) != 0 {
		t.Fatalf("keys left after the run: %v", ks)
	}
}

func TestMultilockOnLockcore(t *testing.T) {
	cfg := short
	cfg.Keys, cfg.Fanout = 6, 3
	run, rdb := runPlan(t, Multilock{}, lockcoreDriver(t, "lockcore"), drivers.Config{Needs: Multilock{}.Needs()}, cfg)
	safe(t, run)
	if ks := keys(t, rdb); len(ks) != 0 {
		t.Fatalf("keys left after the run: %v", ks)
	}
}

// TestMultilockOnCluster takes sets whose keys lie in different slots of a 3-master cluster.
func TestMultilockOnCluster(t *testing.T) {
	t.Parallel() // a cluster of its own; most of its time is starting it
	c := redistest.NewCluster(t)
	cfg := short
	cfg.Keys, cfg.Fanout, cfg.Duration = 20, 4, 500*time.Millisecond
	run, _ := runPlan(t, Multilock{}, lockcoreDriver(t, "lockcore"), drivers.Config{Topology: "cluster", Addrs: c.Addrs(), Needs: Multilock{}.Needs()}, cfg)
	safe(t, run)
}

// TestFencedContentionOnLockcore runs contention on lockcore-fenced: tokens are checked and must
// rise; the only keys left are the token counters, which never expire by design.
func TestFencedContentionOnLockcore(t *testing.T) {
	run, rdb := runPlan(t, Contention{}, lockcoreDriver(t, "lockcore-fenced"), drivers.Config{}, short)
	safe(t, run)
	ks := keys(t, rdb)
	if len(ks) == 0 || len(ks) > short.Keys {
		t.Fatalf("keys left %v, want the token counters of up to %d locks", ks, short.Keys)
	}
	for _, k := range ks {
		if !strings.HasPrefix(k, "redisson_lock_token:{") {
			t.Errorf("key %q left after the run", k)
		}
	}
}

// Broken drivers, to prove the checkers can fail. Each grants everything at once.

// grantAll is a driver whose every lock is granted at once: it excludes nobody. Its workers
// implement every kind's interface; tokens count down when down is set.
type grantAll struct {
	kinds drivers.Kind
	down  bool // hand out falling tokens
	// excl, when set, makes Lock exclusive per name in this process, so that only the tokens
	// are wrong.
	excl bool
	mu   sync.Mutex
	held map[string]*sync.Mutex
	tok  atomic.Int64
}

func (d *grantAll) Name() string        { return "grantall" }
func (d *grantAll) Kinds() drivers.Kind { return d.kinds }
func (d *grantAll) Open(context.Context, drivers.Config) (drivers.Locker, error) {
	d.held = map[string]*sync.Mutex{}
	return d, nil
}
func (d *grantAll) NewWorker() drivers.Worker   { return grantAllWorker{d} }
func (d *grantAll) Settings() map[string]string { return nil }
func (d *grantAll) Close() error                { return nil }

func (d *grantAll) mutex(name string) *sync.Mutex {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, ok := d.held[name]
	if !ok {
		m = new(sync.Mutex)
		d.held[name] = m
	}
	return m
}

type grantAllWorker struct{ d *grantAll }

func (w grantAllWorker) Lock(ctx context.Context, name string) error {
	if w.d.excl {
		w.d.mutex(name).Lock()
	}
	return nil
}
func (w grantAllWorker) Unlock(ctx context.Context, name string) error {
	if w.d.excl {
		w.d.mutex(name).Unlock()
	}
	return nil
}
func (grantAllWorker) RLock(context.Context, string) error         { return nil }
func (grantAllWorker) RUnlock(context.Context, string) error       { return nil }
func (grantAllWorker) LockMulti(context.Context, []string) error   { return nil }
func (grantAllWorker) UnlockMulti(context.Context, []string) error { return nil }
func (w grantAllWorker) LockFenced(ctx context.Context, name string) (int64, error) {
	err := w.Lock(ctx, name)
	t := w.d.tok.Add(1)
	if w.d.down {
		t = 1<<40 - t
	}
	return t, err
}

// runBroken runs w on the broken driver d, 8 workers on 2 keys, without Redis.
func runBroken(t *testing.T, w Workload, d drivers.Driver, mod func(*Config)) results.Run {
	t.Helper()
	cfg := Config{Concurrency: 8, Keys: 2, Hold: time.Millisecond, Duration: 300 * time.Millisecond, Warmup: -1}
	if mod != nil {
		mod(&cfg)
	}
	run, err := Run(context.Background(), Plan{Workload: w, Config: cfg, Driver: d, Target: drivers.Config{Topology: "none", Addrs: []string{"unused:1"}}})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestCheckersCatchBrokenLocks(t *testing.T) {
	t.Run("rw", func(t *testing.T) {
		run := runBroken(t, RW{}, &grantAll{kinds: drivers.KindMutex | drivers.KindRW}, func(c *Config) { c.ReadRatio = 0.5 })
		if run.Violations == 0 {
			t.Fatal("a read-write lock that excludes nobody produced no violations")
		}
	})
	t.Run("rw writers only", func(t *testing.T) {
		run := runBroken(t, RW{}, &grantAll{kinds: drivers.KindMutex | drivers.KindRW}, func(c *Config) { c.ReadRatio = -1 })
		if run.Violations == 0 {
			t.Fatal("writers that exclude nobody produced no violations")
		}
	})
	t.Run("multilock", func(t *testing.T) {
		run := runBroken(t, Multilock{}, &grantAll{kinds: drivers.KindMutex | drivers.KindMulti}, func(c *Config) { c.Keys, c.Fanout = 4, 2 })
		if run.Violations == 0 {
			t.Fatal("a multi-lock that excludes nobody produced no violations")
		}
	})
	t.Run("fencing", func(t *testing.T) {
		// Exclusive, so every violation is a token out of order.
		run := runBroken(t, Contention{}, &grantAll{kinds: drivers.KindMutex | drivers.KindFenced, down: true, excl: true}, nil)
		if run.FencingViolations == 0 || run.Violations != run.FencingViolations {
			t.Fatalf("falling tokens on an exclusive lock: %d violations, %d of them fencing; want all fencing, some", run.Violations, run.FencingViolations)
		}
		// A fencing violation is a safety finding, not an error of the driver or server.
		if run.Errors != 0 || run.ErrorsByKind["fencing_violation"] != 0 {
			t.Fatalf("fencing violations counted as errors: %d errors %v", run.Errors, run.ErrorsByKind)
		}
	})
	t.Run("fencing and overlap", func(t *testing.T) {
		// Not exclusive: two holders at once add to the fencing part, which stays a part.
		run := runBroken(t, Contention{}, &grantAll{kinds: drivers.KindMutex | drivers.KindFenced, down: true}, nil)
		if run.FencingViolations == 0 || run.Violations <= run.FencingViolations {
			t.Fatalf("falling tokens, nobody excluded: %d violations, %d of them fencing; want both kinds", run.Violations, run.FencingViolations)
		}
	})
	t.Run("fencing ok", func(t *testing.T) {
		run := runBroken(t, Contention{}, &grantAll{kinds: drivers.KindMutex | drivers.KindFenced, excl: true}, nil)
		if run.Violations != 0 || run.FencingViolations != 0 || run.Errors != 0 || run.Acquisitions == 0 {
			t.Fatalf("exclusive lock with rising tokens: %d violations (%d fencing), errors %v, %d acquisitions", run.Violations, run.FencingViolations, run.ErrorsByKind, run.Acquisitions)
		}
	})
}

// plainOnly lists every kind but hands out workers with Lock and Unlock only, as a driver opened
// without the run's kinds in drivers.Config.Needs would.
type plainOnly struct{ noLock }

func (plainOnly) Kinds() drivers.Kind { return drivers.KindMutex | drivers.KindRW | drivers.KindMulti }
func (plainOnly) Open(context.Context, drivers.Config) (drivers.Locker, error) {
	return plainOnly{}, nil
}
func (plainOnly) NewWorker() drivers.Worker { return struct{ drivers.Worker }{noLock{}} }

// TestWorkerLackingTheKindStopsTheRun checks that a worker without the workload's interface ends
// the run at once with a named error per worker, instead of locking the wrong way.
func TestWorkerLackingTheKindStopsTheRun(t *testing.T) {
	const planned = time.Minute
	for _, w := range []Workload{RW{}, Multilock{}} {
		run := runBroken(t, w, plainOnly{}, func(c *Config) { c.Duration = planned; c.Warmup = 100 * time.Millisecond })
		want := "unsupported_" + w.Needs().String()
		if run.Acquisitions != 0 || run.ErrorsByKind[want] != 8 {
			t.Errorf("%s: %d acquisitions, errors %v; want none and %s for each of 8 workers", w.Name(), run.Acquisitions, run.ErrorsByKind, want)
		}
		// The measured phase ends when its last worker stops, not when its time is up.
		if run.DurationS >= planned.Seconds() {
			t.Errorf("%s: the measured phase ran its full %v with no worker able to lock", w.Name(), planned)
		}
	}
}

// fakeMulti is a MultiWorker for tests that never reach Redis.
type fakeMulti struct{ grantAllWorker }
