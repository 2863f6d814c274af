package drivers_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/redis/go-redis/v9"
)

var syncedVersions = []string{"3.23", "3.43", "3.52", "4.7"}

// goldenTrace compares got with the trace file at path (under testdata/redisson-traces), or
// writes it with -update-traces.
func goldenTrace(t *testing.T, path, title, got string) {
	t.Helper()
	path = filepath.Join("testdata", "redisson-traces", path)
	if *updateTraces {
		header := "# " + title + ": commands per actor, scripts shown by the Redis calls they make.\n"
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(header+got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-traces to write it, then review it against Redisson's source)", err)
	}
	if want := stripComments(string(raw)); got != want {
		t.Errorf("%s: the driver's commands differ from the trace written from Redisson's source\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// syncedTraceCases are the lock kinds recorded on replicated topologies: the RLock alone, as
// the synced path is the transport's and the same for every lock kind.
func syncedTraceCases() []traceCase {
	var out []traceCase
	for _, c := range traceCases() {
		if c.kind == "mutex" || c.kind == "reentrant" {
			out = append(out, c)
		}
	}
	return out
}

// TestRedissonSyncedTraces records each profile's commands on the master of a native sentinel
// (2 replicas), of a native cluster (1 replica per master) and of a sentinel whose master has
// AOF on, and compares them with testdata/redisson-traces/{sentinel,cluster,aof}/<version>/.
// They pin syncedEval per version: 3.23 sends INFO REPLICATION before every lock and unlock
// script and WAIT 2 (or 1) 1000 after it; 3.43 probes WAIT 0 0 and reads INFO REPLICATION once;
// 3.52 probes WAIT 0 0 (+ WAITAOF 0 0 0, which Redis 7.0 does not know, so MONITOR does not
// show it and the batch ends with WAIT even with AOF on), reads INFO ALL once and SCRIPT LOADs
// before its EVALSHA batches.
func TestRedissonSyncedTraces(t *testing.T) {
	t.Parallel() // its own deployments, mostly waited for
	run := func(t *testing.T, dir, where string, cfg drivers.Config, master string, versions []string, cases []traceCase) {
		for _, version := range versions {
			for _, c := range cases {
				for _, contended := range []bool{false, true} {
					name := c.kind + "-uncontended"
					if contended {
						name = c.kind + "-contended"
					}
					t.Run(version+"/"+name, func(t *testing.T) {
						got := recordTraceOn(t, cfg, master, version, c, contended)
						goldenTrace(t, filepath.Join(dir, version, name+".trace"),
							"Redisson "+version+" "+name+" on "+where, got)
					})
				}
			}
		}
	}
	t.Run("sentinel", func(t *testing.T) {
		t.Parallel()
		s := redistest.NewSentinel(t)
		cfg := drivers.Config{Topology: compose.KindSentinel, Addrs: s.Addrs(), MasterName: s.MasterName()}
		run(t, "sentinel", "a sentinel master with 2 replicas", cfg, sentinelMaster(t, s), syncedVersions, syncedTraceCases())
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := redistest.NewCluster(t)
		cfg := drivers.Config{Topology: compose.KindCluster, Addrs: c.Addrs()}
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
		defer rdb.Close()
		m, err := rdb.MasterForKey(t.Context(), "tr:k")
		if err != nil {
			t.Fatal(err)
		}
		run(t, "cluster", "the cluster master of tr:k, with 1 replica", cfg, m.Options().Addr, syncedVersions, syncedTraceCases())
	})
	t.Run("aof", func(t *testing.T) {
		t.Parallel()
		s := redistest.NewSentinel(t)
		master := sentinelMaster(t, s)
		must(t, inspect(t, master).ConfigSet(t.Context(), "appendonly", "yes").Err())
		cfg := drivers.Config{Topology: compose.KindSentinel, Addrs: s.Addrs(), MasterName: s.MasterName()}
		run(t, "aof", "a sentinel master with 2 replicas and appendonly yes (Redis 7.0 knows no WAITAOF: WAIT)", cfg, master, []string{"3.52", "4.7"}, syncedTraceCases()[:1])
	})
}

// sentinelMaster returns the address of s's master.
func sentinelMaster(t *testing.T, s *compose.Sentinel) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := s.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// replicasOf returns the addresses of the replicas connected to the master at addr.
func replicasOf(t *testing.T, addr string) []string {
	t.Helper()
	info, err := inspect(t, addr).Info(t.Context(), "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.SplitSeq(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(k, "slave") || !strings.Contains(v, "ip=") {
			continue
		}
		var ip, port string
		for f := range strings.SplitSeq(v, ",") {
			if val, ok := strings.CutPrefix(f, "ip="); ok {
				ip = val
			}
			if val, ok := strings.CutPrefix(f, "port="); ok {
				port = val
			}
		}
		out = append(out, ip+":"+port)
	}
	if len(out) == 0 {
		t.Fatalf("master %s lists no replicas", addr)
	}
	return out
}

// pause stops the processes at addrs with SIGSTOP, so that they keep their connections but
// acknowledge nothing, and returns the function that resumes them (also run when the test ends).
func pause(t *testing.T, s *compose.Sentinel, addrs []string) func() {
	t.Helper()
	for _, a := range addrs {
		must(t, s.Signal(a, syscall.SIGSTOP))
	}
	var once sync.Once
	resume := func() {
		once.Do(func() {
			for _, a := range addrs {
				if err := s.Signal(a, syscall.SIGCONT); err != nil {
					t.Errorf("resume %s: %v", a, err)
				}
			}
		})
	}
	t.Cleanup(resume)
	return resume
}

// shortfall is what one profile does when no replica acknowledges: how many times it runs the
// call (ServiceManager.execute: 1 + retryAttempts, or 1 when the shortfall is not recognised),
// and whether the lock it took stays taken.
var shortfalls = []struct {
	version  string
	attempts int
	kept     bool
	message  string // Redisson's exception message, which the error starts with
}{
	// "None of slaves were synced" matched: undone, retried 3 times after 1.5 s.
	{"3.23", 4, false, "None of slaves were synced ("},
	// The longer message is not matched: no undo, no retry.
	{"3.43", 1, true, "None of slaves were synced. Try to increase slavesSyncTimeout"},
	// NoSyncedSlavesException: undone, retried 4 times after 1-2 s.
	{"3.52", 5, false, "None of slaves were synced. Try to increase slavesSyncTimeout"},
	// The same in 4.7.0 (CommandAsyncService, ServiceManager.execute).
	{"4.7", 5, false, "None of slaves were synced. Try to increase slavesSyncTimeout"},
}

// TestRedissonSyncedShortfall pauses the replicas of a native sentinel's master (SIGSTOP) so
// that WAIT counts none of them, and checks, per profile, Redisson's answer to a lock call and to
// an unlock call: the error (ErrRedissonNotSynced, the number of calls made), whether the lock
// is left taken, and the commands (golden traces sentinel/<version>/shortfall-lock.trace and
// shortfall-unlock.trace: each attempt's script and WAIT, 3.23's and 3.52's undo after each
// lock attempt, 3.52's one request id across unlock attempts). The three profiles run at once
// on their own keys, so that the replicas are paused once per phase.
func TestRedissonSyncedShortfall(t *testing.T) {
	t.Parallel()
	// Each phase on a deployment of its own, the two at once: a phase is mostly Redisson's
	// retry delays (up to 5 attempts, each a 1 s WAIT and a 1-2 s delay), so one after the
	// other on one deployment they were the drivers package's longest test (44 s), ending it.
	t.Run("shortfall-lock", func(t *testing.T) {
		t.Parallel()
		redissonShortfallPhase(t, "shortfall-lock", nil,
			func(ctx context.Context, w drivers.Worker, key string) error { return w.Lock(ctx, key) })
	})
	t.Run("shortfall-unlock", func(t *testing.T) {
		t.Parallel()
		redissonShortfallPhase(t, "shortfall-unlock",
			func(ctx context.Context, w drivers.Worker, key string) error { return w.Lock(ctx, key) },
			func(ctx context.Context, w drivers.Worker, key string) error { return w.Unlock(ctx, key) })
	})
}

// redissonShortfallPhase is one phase of TestRedissonSyncedShortfall on a sentinel deployment of
// its own: every profile's setup (if any) on its key, then, with the replicas paused, every
// profile's call at once; then the errors, the key left or not, and the golden traces of name.
func redissonShortfallPhase(t *testing.T, name string, setup, call func(context.Context, drivers.Worker, string) error) {
	s := redistest.NewSentinel(t)
	master := sentinelMaster(t, s)
	replicas := replicasOf(t, master)
	rdb := inspect(t, master)
	// An explicit lease (the watchdog's 30 s, so that the scripts read as in the other traces):
	// no renewal may fall into the seconds the retries take.
	cfg := drivers.Config{Topology: compose.KindSentinel, Addrs: s.Addrs(), MasterName: s.MasterName(),
		Concurrency: 1, Lease: drivers.RedissonDefaultLease}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The profiles' connections are told apart by their local address, which Linux reuses on
	// loopback as soon as a connection closes (tcp_tw_reuse): a port one profile's closed
	// connection had must not be another's, or its commands land in the wrong trace.
	var ports usedPorts
	type run struct {
		mu     sync.Mutex
		owners map[string]string
		l      drivers.Locker
		w      drivers.Worker
		err    error
	}
	open := func(version string) *run {
		r := &run{owners: map[string]string{}}
		d, err := drivers.Parse("redisson:version=" + version)
		if err != nil {
			t.Fatal(err)
		}
		c := cfg
		dial := uniqueDialer(&ports, (&net.Dialer{}).DialContext)
		c.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dial(ctx, network, addr)
			if err == nil {
				r.mu.Lock()
				r.owners[conn.LocalAddr().String()] = "A"
				r.mu.Unlock()
			}
			return conn, err
		}
		r.l = openDriver(t, d, c)
		r.w = r.l.NewWorker()
		return r
	}
	runs := make([]*run, len(shortfalls))
	for i, sf := range shortfalls {
		runs[i] = open(sf.version)
		if setup != nil {
			must(t, setup(ctx, runs[i].w, "tr:"+name+":"+sf.version))
		}
	}
	mon := startMonitor(t, master)
	resume := pause(t, s, replicas)
	var wg sync.WaitGroup
	for i, sf := range shortfalls {
		wg.Go(func() { runs[i].err = call(ctx, runs[i].w, "tr:"+name+":"+sf.version) })
	}
	wg.Wait()
	resume()
	for i, sf := range shortfalls {
		r := runs[i]
		key := "tr:" + name + ":" + sf.version
		var ns *drivers.RedissonNotSyncedError
		switch {
		case !errors.Is(r.err, drivers.ErrRedissonNotSynced) || !errors.As(r.err, &ns):
			t.Errorf("%s %s: err = %v, want a RedissonNotSyncedError", sf.version, name, r.err)
		case !strings.HasPrefix(ns.Error(), sf.message):
			t.Errorf("%s %s: %q, want Redisson's message %q", sf.version, name, ns.Error(), sf.message)
		case ns.Attempts != sf.attempts || ns.Replicas != len(replicas):
			t.Errorf("%s %s: %d attempts waiting for %d replicas, want %d and %d", sf.version, name,
				ns.Attempts, ns.Replicas, sf.attempts, len(replicas))
		}
		held := rdb.Exists(ctx, key).Val() == 1
		if want := sf.kept && name == "shortfall-lock"; held != want {
			t.Errorf("%s %s: lock left taken = %v, want %v", sf.version, name, held, want)
		}
		must(t, r.l.Close())
	}
	rdb.Echo(ctx, "trace-end")
	// The sentinels' PINGs and hellos may follow the marker: it need not be the last line.
	mon.waitFor(t, "the end marker", func(lines []monitorLine) bool {
		return slices.ContainsFunc(lines, func(l monitorLine) bool { return strings.EqualFold(l.args[0], "echo") })
	})
	lines := mon.snapshot()
	for i, sf := range shortfalls {
		r := runs[i]
		got := normaliseTrace(lines, func(l monitorLine) string {
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.owners[l.client]
		})
		goldenTrace(t, filepath.Join("sentinel", sf.version, name+".trace"),
			"Redisson "+sf.version+" "+name+" on a sentinel master whose 2 replicas do not acknowledge", got)
	}
}

// usedPorts are the local addresses the connections of a test have had.
type usedPorts struct {
	mu   sync.Mutex
	used map[string]bool
}

// uniqueDialer dials with dial until it gets a local address no connection through ports has
// had, closing the others, so that a MONITOR line's client address names one connection.
func uniqueDialer(ports *usedPorts, dial func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		for range 100 {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			ports.mu.Lock()
			local := c.LocalAddr().String()
			reused := ports.used[local]
			if ports.used == nil {
				ports.used = map[string]bool{}
			}
			ports.used[local] = true
			ports.mu.Unlock()
			if !reused {
				return c, nil
			}
			c.Close()
		}
		return nil, fmt.Errorf("no fresh local port to dial %s from in 100 tries", addr)
	}
}

// TestRedissonSyncedTimeoutRetry pauses the writes of a native sentinel's master for 4.5 s
// (CLIENT PAUSE … WRITE) while each profile takes a lock, longer than a batch's reply timeout
// (Redisson's 3 s timeout + the 1 s sync timeout): the batch with WAIT is sent again after the
// retry delay, in 3.43 and 3.52 too, whose lock scripts are "no retry" only when sent alone
// (CommandAsyncService.syncedEval passes the flag to the plain path only; the batch takes the
// config's retryAttempts), so the lock is taken. Without the retry the call would fail with a
// timeout.
func TestRedissonSyncedTimeoutRetry(t *testing.T) {
	t.Parallel()
	s := redistest.NewSentinel(t)
	master := sentinelMaster(t, s)
	rdb := inspect(t, master)
	cfg := drivers.Config{Topology: compose.KindSentinel, Addrs: s.Addrs(), MasterName: s.MasterName(),
		Concurrency: 1, Lease: drivers.RedissonDefaultLease}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	workers := make([]drivers.Worker, len(syncedVersions))
	for i, v := range syncedVersions {
		d, err := drivers.Parse("redisson:version=" + v)
		if err != nil {
			t.Fatal(err)
		}
		workers[i] = openDriver(t, d, cfg).NewWorker()
		// The probe and the INFO go out before the pause: only the batch meets it.
		must(t, workers[i].Lock(ctx, "tr:warm:"+v))
		must(t, workers[i].Unlock(ctx, "tr:warm:"+v))
	}
	// A master that stalls for longer than compose.SentinelDownAfter is failed over (the
	// sentinels' hello PUBLISHes are writes, paused too): the sentinels are told to wait longer.
	for _, a := range s.Addrs() {
		must(t, inspect(t, a).Do(ctx, "sentinel", "set", s.MasterName(), "down-after-milliseconds", 60000).Err())
	}
	must(t, rdb.Do(ctx, "client", "pause", 4500, "write").Err())
	errs := make([]error, len(syncedVersions))
	var wg sync.WaitGroup
	for i, v := range syncedVersions {
		wg.Go(func() { errs[i] = workers[i].Lock(ctx, "tr:timeout:"+v) })
	}
	wg.Wait()
	for i, v := range syncedVersions {
		if errs[i] != nil {
			t.Errorf("%s: lock across a 4.5 s write pause: %v, want the batch sent again and the lock taken", v, errs[i])
			continue
		}
		if n, err := rdb.HLen(ctx, "tr:timeout:"+v).Result(); n != 1 {
			t.Errorf("%s: the lock hash has %d owners after the lock call (%v), want 1", v, n, err)
		}
		must(t, workers[i].Unlock(ctx, "tr:timeout:"+v))
	}
}

// TestRedissonSyncedShortfallKinds checks, for the 4.7 profile on a sentinel master whose
// replicas are stopped, that the lock kinds built on RedissonLock.tryAcquireAsync0 answer a
// WAIT shortfall as an RLock does — their own unlock script as the undo, the attempt again up to
// retryAttempts, the shortfall as the error, the lock not left taken — and that RFencedLock's
// lockAndGetToken, which has no handleNoSync, fails at the first attempt with the lock taken.
func TestRedissonSyncedShortfallKinds(t *testing.T) {
	t.Parallel()
	s := redistest.NewSentinel(t)
	master := sentinelMaster(t, s)
	replicas := replicasOf(t, master)
	rdb := inspect(t, master)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	open := func(spec string, needs drivers.Kind) drivers.Worker {
		d, err := drivers.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		cfg := drivers.Config{Topology: compose.KindSentinel, Addrs: s.Addrs(), MasterName: s.MasterName(),
			Concurrency: 1, Lease: drivers.RedissonDefaultLease, Needs: needs}
		return openDriver(t, d, cfg).NewWorker()
	}
	cases := []struct {
		name     string
		call     func(key string) error
		attempts int
		kept     bool
	}{
		{"fair", func(key string) error { return open("redisson-fair:version=4.7", drivers.KindFair).Lock(ctx, key) }, 5, false},
		{"write", func(key string) error {
			return open("redisson:version=4.7", drivers.KindRW).(drivers.RWWorker).Lock(ctx, key)
		}, 5, false},
		{"read", func(key string) error {
			return open("redisson:version=4.7", drivers.KindRW).(drivers.RWWorker).RLock(ctx, key)
		}, 5, false},
		{"fenced-lock", func(key string) error { return open("redisson-fenced:version=4.7", drivers.KindFenced).Lock(ctx, key) }, 5, false},
		{"fenced-token", func(key string) error {
			_, err := open("redisson-fenced:version=4.7", drivers.KindFenced).(drivers.FencedWorker).LockFenced(ctx, key)
			return err
		}, 1, true},
	}
	errs := make([]error, len(cases))
	resume := pause(t, s, replicas)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() { errs[i] = c.call("tr:kinds:" + c.name) })
	}
	wg.Wait()
	resume()
	for i, c := range cases {
		var ns *drivers.RedissonNotSyncedError
		if !errors.As(errs[i], &ns) || !errors.Is(errs[i], drivers.ErrRedissonNotSynced) {
			t.Errorf("%s: err = %v, want a RedissonNotSyncedError", c.name, errs[i])
			continue
		}
		if ns.Attempts != c.attempts {
			t.Errorf("%s: %d attempts, want %d", c.name, ns.Attempts, c.attempts)
		}
		if held := rdb.Exists(ctx, "tr:kinds:"+c.name).Val() == 1; held != c.kept {
			t.Errorf("%s: lock left taken = %v, want %v", c.name, held, c.kept)
		}
	}
}
