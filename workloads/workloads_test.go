package workloads

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

func TestConfigValidate(t *testing.T) {
	base := func() Config { c := Config{}; c.Fill(); return c }
	cases := []struct {
		name string
		mod  func(*Config)
		ok   bool
	}{
		{"defaults", func(*Config) {}, true},
		{"zipf", func(c *Config) { c.KeyDist = DistZipf }, true},
		{"zero concurrency after fill is impossible; negative is bad", func(c *Config) { c.Concurrency = -1 }, false},
		{"negative keys", func(c *Config) { c.Keys = -5 }, false},
		{"unknown distribution", func(c *Config) { c.KeyDist = "gauss" }, false},
		{"zipf exponent 1", func(c *Config) { c.KeyDist = DistZipf; c.ZipfS = 1 }, false},
		{"negative hold", func(c *Config) { c.Hold = -time.Second }, false},
		{"negative duration", func(c *Config) { c.Duration = -time.Second }, false},
	}
	for _, tc := range cases {
		c := base()
		tc.mod(&c)
		err := c.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: error %v does not wrap ErrBadConfig", tc.name, err)
		}
	}
}

func TestKeyChooserIsReproducibleAndInRange(t *testing.T) {
	for _, dist := range []string{DistUniform, DistZipf} {
		cfg := Config{Keys: 50, KeyDist: dist, Seed: 7}
		cfg.Fill()
		a, b, other := newKeyChooser(&cfg, 3), newKeyChooser(&cfg, 3), newKeyChooser(&cfg, 4)
		same, counts := true, make([]int, cfg.Keys)
		for range 10000 {
			x, y, z := a.next(), b.next(), other.next()
			if x != y {
				t.Fatalf("%s: same seed and worker gave %d and %d", dist, x, y)
			}
			if x < 0 || x >= cfg.Keys {
				t.Fatalf("%s: key %d out of range", dist, x)
			}
			same = same && x == z
			counts[x]++
		}
		if same {
			t.Errorf("%s: workers 3 and 4 drew the same sequence", dist)
		}
		if dist == DistZipf && counts[0] < 5*counts[cfg.Keys-1] {
			t.Errorf("zipf is not skewed: key 0 drawn %d times, key %d %d times", counts[0], cfg.Keys-1, counts[cfg.Keys-1])
		}
	}
}

func TestCheckerCountsOverlap(t *testing.T) {
	c := NewChecker(2)
	c.Enter(0, 0)
	c.Enter(1, 0)
	if c.Violations() != 0 {
		t.Fatal("distinct keys counted as a violation")
	}
	c.Enter(0, 0)
	if c.Violations() != 1 {
		t.Fatalf("overlap on key 0: %d violations, want 1", c.Violations())
	}
	c.Exit(0, 0)
	c.Exit(0, 0)
	c.Enter(0, 0)
	if c.Violations() != 1 {
		t.Fatal("sequential holders counted as a violation")
	}
}

// runOn runs the contention workload with driver d against a private server.
func runOn(t *testing.T, ctx context.Context, d drivers.Driver, cfg Config) (results.Run, rueidis.Client) {
	t.Helper()
	srv := redistest.NewServer(t)
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rdb.Close)
	run, err := Run(ctx, Plan{
		Workload: Contention{},
		Config:   cfg,
		Driver:   d,
		Target:   drivers.Config{Topology: "single", Addrs: srv.Addrs()},
		CommandStats: func(ctx context.Context) (results.CommandStats, error) {
			info, err := rdb.Do(ctx, rdb.B().Info().Section("commandstats").Build()).ToString()
			if err != nil {
				return nil, err
			}
			return results.ParseCommandStats(info)
		},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return run, rdb
}

func dbsize(t *testing.T, rdb rueidis.Client) int64 {
	t.Helper()
	n, err := rdb.Do(context.Background(), rdb.B().Dbsize().Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestContentionOnRealDrivers(t *testing.T) {
	for _, name := range []string{"lockcore", "naive"} {
		t.Run(name, func(t *testing.T) {
			d, err := drivers.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			// Few keys and a hold, so workers really contend.
			run, rdb := runOn(t, context.Background(), d, Config{Concurrency: 16, Keys: 4, Hold: 200 * time.Microsecond, Duration: time.Second, Warmup: 200 * time.Millisecond})
			if !run.Complete || run.Acquisitions == 0 || run.ThroughputPerS <= 0 {
				t.Fatalf("run: complete=%v acquisitions=%d throughput=%v", run.Complete, run.Acquisitions, run.ThroughputPerS)
			}
			if run.Violations != 0 || run.Errors != 0 {
				t.Fatalf("violations %d, errors %d (%v)", run.Violations, run.Errors, run.ErrorsByKind)
			}
			// Grants that went through Redis cost a lock and an unlock at least; lockcore's local
			// hand-overs cost none, and its driver counts say how many there were.
			grants := run.Acquisitions
			if d := run.DriverCounts; d != nil {
				grants -= d.LocalHandoffs
			} else if name == "lockcore" {
				t.Fatal("lockcore recorded no driver counts")
			}
			if grants > 0 && float64(run.RedisCommands)/float64(grants) < 2 {
				t.Fatalf("%d Redis commands for %d grants through Redis (%d acquisitions, counts %+v); a lock and an unlock take at least 2",
					run.RedisCommands, grants, run.Acquisitions, run.DriverCounts)
			}
			if name == "lockcore" && run.DriverCounts.LocalHandoffs == 0 {
				t.Fatalf("no local hand-overs with 16 workers on 4 keys: %+v", run.DriverCounts)
			}
			if n := dbsize(t, rdb); n != 0 {
				t.Fatalf("%d keys left in Redis after the run", n)
			}
		})
	}
}

func TestInterruptedRunKeepsWhatWasMeasured(t *testing.T) {
	d, _ := drivers.Get("lockcore")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	run, rdb := runOn(t, ctx, d, Config{Concurrency: 8, Keys: 100, Duration: time.Minute, Warmup: 100 * time.Millisecond})
	if run.Complete || run.Incomplete == "" {
		t.Fatalf("interrupted run marked complete=%v reason=%q", run.Complete, run.Incomplete)
	}
	if run.Acquisitions == 0 || run.DurationS <= 0 || run.DurationS > 10 {
		t.Fatalf("interrupted run kept acquisitions=%d duration=%v", run.Acquisitions, run.DurationS)
	}
	if n := dbsize(t, rdb); n != 0 {
		t.Fatalf("%d keys left in Redis after the interrupted run", n)
	}
}

// noLock is a broken driver that never excludes anyone: the checker must catch it.
type noLock struct{}

func (noLock) Name() string                                                 { return "nolock" }
func (noLock) Kinds() drivers.Kind                                          { return drivers.KindMutex }
func (noLock) Open(context.Context, drivers.Config) (drivers.Locker, error) { return noLock{}, nil }
func (noLock) NewWorker() drivers.Worker                                    { return noLock{} }
func (noLock) Settings() map[string]string                                  { return nil }
func (noLock) Close() error                                                 { return nil }
func (noLock) Lock(context.Context, string) error                           { return nil }
func (noLock) Unlock(context.Context, string) error                         { return nil }

func TestCheckerCatchesABrokenLock(t *testing.T) {
	run, err := Run(context.Background(), Plan{
		Workload: Contention{},
		Config:   Config{Concurrency: 8, Keys: 1, Hold: time.Millisecond, Duration: 300 * time.Millisecond, Warmup: -1},
		Driver:   noLock{},
		Target:   drivers.Config{Topology: "none", Addrs: []string{"unused:1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if run.Violations == 0 {
		t.Fatal("a driver that never locks produced no violations: the checker cannot fail")
	}
}

func TestDriverWithoutNeededKindIsRefused(t *testing.T) {
	_, err := Run(context.Background(), Plan{Workload: needsMore{}, Driver: noLock{}, Target: drivers.Config{Addrs: []string{"x:1"}}})
	if err == nil {
		t.Fatal("a driver lacking the workload's lock kind was run")
	}
}

type needsMore struct{ Contention }

func (needsMore) Needs() drivers.Kind { return drivers.KindMutex | drivers.KindReentrant }
