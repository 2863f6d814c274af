package drivers_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

func TestParseDriverOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec     string
		settings map[string]string // settings that must contain the given text
	}{
		{"lockcore", map[string]string{"local_queue": "on", "handoff": "up to 64 in a row"}},
		{"lockcore:handoff=0", map[string]string{"handoff": "strict"}},
		{"lockcore:handoff=8:handoff_window=1ms", map[string]string{"handoff": "up to 8 in a row inside the process, within 1ms"}},
		{"lockcore:yield=0", map[string]string{"handoff_yield": "none"}},
		{"lockcore:queue=off", map[string]string{"local_queue": "off"}},
		{"lockcore:batch=0", map[string]string{"batch": "off"}},
		{"lockcore:batch=on", map[string]string{"batch": "on", "batch_send": "gather", "batch_max": "32 operations", "max_flush_delay": "20µs"}},
		{"lockcore:inflight=3", map[string]string{"batch_send": "at most 3 in flight"}},
		{"lockcore:inflight=0", map[string]string{"batch_send": "gather everywhere"}},
		{"lockcore:maxbatch=16:inflight=4", map[string]string{"batch_send": "at most 4 in flight", "batch_max": "16 operations"}},
		{"lockcore:flush=0", map[string]string{"max_flush_delay": "0s"}},
		{"lockcore:flush=50us", map[string]string{"max_flush_delay": "50µs"}},
		// A single server has no replica: synced mode has nothing to wait for, and says so.
		{"lockcore", map[string]string{"sync": "auto: no replica connected"}},
		{"lockcore:sync=wait", map[string]string{"sync": "wait: no replica connected"}},
		{"lockcore:sync=off", map[string]string{"sync": "off: no WAIT"}},
		{"lockcore-fenced:sync=off", map[string]string{"sync": "off: no WAIT"}},
		{"lockcore-fair:sync=off", map[string]string{"sync": "off: no WAIT"}},
		{"lockcore-fair", map[string]string{"sync": "auto: no replica"}},
		{"naive", map[string]string{"max_retries": "3 (go-redis default)"}},
		{"naive:retries=0", map[string]string{"max_retries": "0: a command that failed"}},
		{"redislock:retries=2", map[string]string{"max_retries": "2"}},
		{"redisson", map[string]string{"profile": "Redisson " + drivers.RedissonDefaultVersion, "scripts": "EVALSHA"}},
		{"redisson:version=3.23", map[string]string{"profile": "Redisson 3.23", "scripts": "EVAL with the script body", "unlock": "one script", "replica_wait": "INFO REPLICATION before every call"}},
		{"redisson:version=3.43", map[string]string{"profile": "Redisson 3.43", "unlock": "PX 13.5s", "replica_wait": "WAIT", "script_retries": "0", "reply_timeout": "3s"}},
		{"redisson:version=3.43:pubsub_conns=2:channels_per_conn=3:subscribe_timeout=200ms:conns=8",
			map[string]string{"pubsub": "3 channels per connection, up to 2 connections", "pool_size": "8 command connections"}},
		{"naive:lease=1s", map[string]string{"lease": "1s (no renewal)"}},
		{"redislock:lease=250ms:retries=0", map[string]string{"lease": "250ms (no renewal)", "max_retries": "0:"}},
		{"redsync:lease=1s", map[string]string{"lease": "1s (no renewal)"}},
		{"rueidislock:validity=1s", map[string]string{"validity": "1s renewed every 500ms"}},
		{"redisson:watchdog=1s", map[string]string{"lease": "1s"}},
		{"lockcore-fenced:watchdog=1s", map[string]string{"lease": "1s renewed by the watchdog every 333.3"}},
		{"redisson-fair:fair_wait=5s", map[string]string{"fair_wait_time": "5s", "profile": "Redisson " + drivers.RedissonDefaultVersion}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			t.Parallel() // a server of its own
			d, err := drivers.Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if d.Name() != tc.spec {
				t.Fatalf("name %q, want the spec %q", d.Name(), tc.spec)
			}
			l := openDriver(t, d, single(t))
			s := l.Settings()
			for k, want := range tc.settings {
				if !strings.Contains(s[k], want) {
					t.Errorf("settings[%s] = %q, want it to say %q", k, s[k], want)
				}
			}
		})
	}
	for _, bad := range []string{"lockcore:handoff=-1", "lockcore:nope=1", "lockcore:handoff", "lockcore:=1", "lockcore:yield=-1ms",
		"lockcore:handoff_window=0s", "lockcore:handoff_window=10s",
		"lockcore:watchdog=1s:handoff_window=300ms", "lockcore:queue=2", "lockcore:batch=2", "naive:handoff=0",
		"lockcore:inflight=-1", "lockcore:inflight=65", "lockcore:maxbatch=1", "lockcore:maxbatch=129", "lockcore:inflight=x", "lockcore:flush=-1us", "lockcore:flush=2ms", "lockcore:flush=soon",
		"naive:retries=11", "naive:retries=x", "redislock:retries=-1", "redsync:retries=1", "lockcore:handoff=1:handoff=1",
		"redisson:version=3.44", "redisson:version=", "redisson:pubsub_conns=0", "redisson:channels_per_conn=x", "redisson:conns=10001",
		"redisson:subscribe_timeout=0s", "redisson-fair:fair_wait=soon", "redisson:handoff=0",
		"naive:lease=1ms", "naive:lease=x", "redsync:lease=0s", "rueidislock:validity=2ms", "rueidislock:majority=2",
		"redisson:watchdog=1ms", "lockcore-fenced:watchdog=x", "lockcore-fenced:nope=1",
		"lockcore:node_timeout=0s", "lockcore:node_timeout=-1s", "lockcore:node_timeout=soon",
		"lockcore:sync=maybe", "lockcore:sync=", "lockcore-fenced:sync=on", "lockcore-fair:sync=1", "lockcore-fair:handoff=0"} {
		if _, err := drivers.Parse(bad); !errors.Is(err, drivers.ErrBadOption) {
			t.Errorf("Parse(%q) = %v, want ErrBadOption", bad, err)
		}
	}
	if _, err := drivers.Parse("nope:handoff=0"); err == nil || errors.Is(err, drivers.ErrBadOption) {
		t.Errorf("Parse of an unknown driver = %v, want the unknown-driver error", err)
	}
}

// CheckTopology refuses, before any deployment exists, a lockcore option the topology has no
// use for: node_timeout off masters, and on masters any but the RedLock's own three.
func TestCheckTopology(t *testing.T) {
	for _, tc := range []struct {
		spec, topology string
		bad            bool
	}{
		{"lockcore:node_timeout=1s", "single", true},
		{"lockcore:node_timeout=1s", "cluster", true},
		{"lockcore:node_timeout=1s", "masters:3", false},
		{"lockcore:sync=off:node_timeout=1s", "masters:5", false},
		{"lockcore:watchdog=1s:sync=wait", "masters:5", false}, // the safety matrix's row: the RedLock's lease
		{"lockcore:batch=0", "masters:3", true},
		{"lockcore:sync=off:flush=0", "masters:1", true},
		{"lockcore:batch=0", "cluster", false},
		{"lockcore:sync=off", "sentinel", false},
		{"lockcore", "masters:3", false},
		{"redsync", "masters:3", false},
		{"lockcore:batch=0", "", false}, // single
	} {
		err := drivers.CheckTopology(tc.spec, tc.topology)
		if tc.bad != errors.Is(err, drivers.ErrBadOption) || !tc.bad && err != nil {
			t.Errorf("CheckTopology(%q, %q) = %v; want refused: %v", tc.spec, tc.topology, err, tc.bad)
		}
	}
	if err := drivers.CheckTopology("nope", "single"); err == nil {
		t.Error("CheckTopology of an unknown driver: nil, want Parse's error")
	}
}

// A waiter speaking Redisson's protocol (the redisson driver's RLock: EVAL of Redisson's scripts,
// one subscription, an attempt per release message) gets a lock that a hot lockcore client's
// workers keep handing over among themselves, within the hand-over bounds: the window makes
// lockcore release through Redis, and the release message it publishes makes lockcore's next
// local waiter hold back.
func TestRedissonWaiterGetsHotLockcoreLock(t *testing.T) {
	cfg := single(t)
	cfg.Concurrency = 8
	hot := openWith(t, "lockcore", cfg)
	cfg.Concurrency = 1
	remote := openWith(t, "redisson", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var hotGrants, inside, violations atomic.Int64
	enter := func() {
		if inside.Add(1) != 1 {
			violations.Add(1)
		}
		inside.Add(-1)
	}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := hot.NewWorker()
			for range 5_000_000 { // bounded; stop ends it long before
				select {
				case <-stop:
					return
				default:
				}
				if err := w.Lock(ctx, "hot"); err != nil {
					t.Error(err)
					return
				}
				hotGrants.Add(1)
				enter()
				if err := w.Unlock(ctx, "hot"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); hotGrants.Load() < 10_000; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d hot grants in 10s", hotGrants.Load())
		}
	}
	w := remote.NewWorker()
	var waits []time.Duration
	for range 20 {
		start := time.Now()
		if err := w.Lock(ctx, "hot"); err != nil {
			t.Fatal(err)
		}
		waits = append(waits, time.Since(start))
		enter()
		if err := w.Unlock(ctx, "hot"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // let the hot client take it back and settle into hand-overs
	}
	before := hotGrants.Load()
	time.Sleep(50 * time.Millisecond)
	if hotGrants.Load() == before {
		t.Error("the hot client took no lock after the redisson waiter's turns")
	}
	close(stop)
	wg.Wait()
	var worst, total time.Duration
	for _, d := range waits {
		worst = max(worst, d)
		total += d
	}
	counts := hot.(drivers.CountingLocker).Counters()
	t.Logf("redisson waits over 20 acquisitions: mean %v, worst %v; lockcore: %d grants, %+v",
		total/time.Duration(len(waits)), worst, hotGrants.Load(), counts)
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d violations", v)
	}
	if counts.LocalHandoffs == 0 {
		t.Fatal("the hot client handed over nothing: the test did not contend with hand-overs")
	}
	// A liveness bound, not a performance figure: without a bound a hot client could keep the
	// lock for the whole minute; the hand-over window is 5ms.
	if worst > 2*time.Second {
		t.Fatalf("the redisson waiter waited %v", worst)
	}
}
