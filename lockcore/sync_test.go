package lockcore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

// replicaPair is a master with one replica, two redis-server processes the test started.
type replicaPair struct {
	master, replica *compose.Single
	onReplica       rueidis.Client // straight to the replica
}

// startReplicaPair starts a master and a replica of it, and waits until the master counts the
// replica connected and the replica has synced.
func startReplicaPair(t *testing.T) *replicaPair {
	t.Helper()
	// No diskless-sync delay: the replica syncs at once rather than 5 s later.
	master := redistest.NewServer(t, "--repl-diskless-sync-delay", "0")
	_, port, _ := strings.Cut(master.Addr(), ":")
	replica := redistest.NewServer(t, "--replicaof", "127.0.0.1", port)
	// Registered after the servers' own clean-ups, so it runs first: a stopped replica would
	// ignore the SIGTERM that stops it.
	t.Cleanup(func() { _ = replica.Signal(syscall.SIGCONT) })
	r, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{replica.Addr()}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatalf("client for the replica: %v", err)
	}
	t.Cleanup(r.Close)
	m, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{master.Addr()}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatalf("client for the master: %v", err)
	}
	defer m.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, _ := r.Do(t.Context(), r.B().Info().Section("replication").Build()).ToString()
		minfo, _ := m.Do(t.Context(), m.B().Info().Section("replication").Build()).ToString()
		if strings.Contains(info, "master_link_status:up") && infoInt(minfo, "connected_slaves") == 1 {
			return &replicaPair{master: master, replica: replica, onReplica: r}
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica not in sync after 10s:\n%s\n%s", info, minfo)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// replicated is a replica pair with a test env on its master.
type replicated struct {
	*testEnv
	*replicaPair
}

// newReplicated starts a replica pair and an env on its master.
func newReplicated(t *testing.T) *replicated {
	t.Helper()
	p := startReplicaPair(t)
	e := newEnvFor(t, rueidis.ClientOption{InitAddress: []string{p.master.Addr()}}, []string{p.master.Addr()}, false)
	e.addr = p.master.Addr()
	return &replicated{testEnv: e, replicaPair: p}
}

// pause stops the replica's process (SIGSTOP): the master still counts it connected, and every
// WAIT for it runs out its timeout. resume lets it go on.
func (r *replicaPair) pause(t testing.TB) {
	t.Helper()
	if err := r.replica.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
}

func (r *replicaPair) resume(t testing.TB) {
	t.Helper()
	if err := r.replica.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// onReplicaExists reports whether key exists on the replica.
func (r *replicaPair) onReplicaExists(t *testing.T, key string) bool {
	t.Helper()
	n, err := r.onReplica.Do(t.Context(), r.onReplica.B().Exists().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// TestSyncedGrantsOneWaitPerBatch checks synced mode on a master with one replica: the Client
// finds the replica by itself (SyncAuto), every grant is on the replica by the time Lock
// returns, and WAIT goes out once per pipeline, not once per script: the server counts no more
// WAITs than script calls, and fewer than the lock and unlock operations those calls carried.
func TestSyncedGrantsOneWaitPerBatch(t *testing.T) {
	t.Parallel() // a replica pair of its own; mostly waiting on the replica and WAIT timeouts
	r := newReplicated(t)
	c := r.client(t, Options{})
	if mode, n := c.Sync("any"); mode != SyncWait || n != 1 {
		t.Fatalf("Sync = %v, %d replicas; want wait, 1", mode, n)
	}
	ctx := t.Context()

	// A grant is on the replica when Lock returns: WAIT came back with it.
	m := c.Mutex("sync:one")
	o := c.NewOwner()
	if err := m.Lock(ctx, o); err != nil {
		t.Fatal(err)
	}
	if !r.onReplicaExists(t, "sync:one") {
		t.Error("a synced grant is not on the replica when Lock returns")
	}
	if err := m.Unlock(ctx, o); err != nil {
		t.Fatal(err)
	}
	if r.onReplicaExists(t, "sync:one") {
		t.Error("a synced release is not on the replica when Unlock returns")
	}

	waits0 := r.calls(t, "wait")
	scripts0 := r.calls(t, "evalsha") + r.calls(t, "eval")
	before := c.snapshot()
	const workers, rounds = 32, 40
	var wg sync.WaitGroup
	// 64 keys for 32 workers: enough contention for hand-overs and waits, enough distinct
	// keys that most operations go through Redis and meet in batches.
	var inside [64]int32
	var mu sync.Mutex
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			o := c.NewOwner()
			for i := range rounds {
				k := (w + 7*i) % len(inside)
				name := "sync:k" + strconv.Itoa(k)
				m := c.Mutex(name)
				if err := m.Lock(ctx, o); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				inside[k]++
				if inside[k] != 1 {
					errs <- fmt.Errorf("two holders of %s", name)
				}
				inside[k]--
				mu.Unlock()
				if err := m.Unlock(ctx, o); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	after := c.snapshot()
	waits := r.calls(t, "wait") - waits0
	scripts := r.calls(t, "evalsha") + r.calls(t, "eval") - scripts0
	// Operations through Redis: attempts, and as many releases as grants through Redis (the
	// rest were hand-overs, with no call at all).
	ops := (after.Attempts - before.Attempts) + (after.Attempts - before.Attempts - (after.FailedAttempts - before.FailedAttempts))
	t.Logf("%d lock attempts, %d scripts calls, %d batches, %d WAITs, %d hand-overs", after.Attempts-before.Attempts, scripts, after.Batches-before.Batches, waits, after.Handoffs-before.Handoffs)
	if waits == 0 {
		t.Fatal("no WAIT reached the master")
	}
	if waits != after.SyncWaits-before.SyncWaits {
		t.Errorf("the master counted %d WAITs, the Client sent %d", waits, after.SyncWaits-before.SyncWaits)
	}
	if waits > scripts {
		t.Errorf("%d WAITs for %d script calls: more than one per pipeline", waits, scripts)
	}
	if after.Batches == before.Batches {
		t.Fatal("no batch of several operations formed: the test shows nothing about WAIT per batch")
	}
	if waits >= ops {
		t.Errorf("%d WAITs for %d lock and unlock operations: one per operation, not per batch", waits, ops)
	}
	if after.NotSynced != before.NotSynced {
		t.Errorf("%d calls not synced with a healthy replica", after.NotSynced-before.NotSynced)
	}
	r.assertNoKeys(t)
}

// TestSyncShortfall pauses the replica (SIGSTOP: the master still counts it connected) and
// checks that nothing is confirmed that the replica has not acknowledged: a lock attempt fails
// with ErrNotSynced and leaves no hold in Redis, a batch of attempts likewise, a fenced grant
// hands out no token, a renewal counts as failed (the confirmed lease stays put), a release
// fails with ErrNotSynced and its field is cleaned up; after the replica resumes, grants succeed
// again and the fenced token is above every token the counter ever reached.
func TestSyncShortfall(t *testing.T) {
	t.Parallel() // a replica pair of its own; mostly waiting on the replica and WAIT timeouts
	r := newReplicated(t)
	const timeout = 100 * time.Millisecond
	c := r.client(t, Options{SyncTimeout: timeout, LeaseTime: 1200 * time.Millisecond})
	ctx := t.Context()

	// A hold taken while the replica is healthy, to watch its renewals fail.
	held := c.Mutex("sync:held")
	holder := c.NewOwner()
	untilSynced(t, func() error { return held.Lock(ctx, holder) })
	f := c.FencedMutex("sync:fenced")
	fo := c.NewOwner()
	var tok1 int64
	untilSynced(t, func() (err error) { tok1, err = f.Lock(ctx, fo); return err })
	released(t, f.Unlock(ctx, fo))
	expires := func() int64 {
		s := c.holds.shard("sync:held")
		s.mu.Lock()
		defer s.mu.Unlock()
		if h := s.m["sync:held"]; h != nil {
			return h.expires
		}
		return -1
	}
	exp0 := expires()

	r.pause(t)
	paused := true
	defer func() {
		if paused {
			r.resume(t)
		}
	}()

	// One attempt: no grant, the documented error, nothing left in Redis.
	m := c.Mutex("sync:a")
	o := c.NewOwner()
	ok, err := m.TryLock(ctx, o, 0, 0)
	if ok || !errors.Is(err, ErrNotSynced) {
		t.Fatalf("TryLock with the replica paused = %v, %v; want false and ErrNotSynced", ok, err)
	}
	var se *SyncError
	if !errors.As(err, &se) || se.Want != 1 || se.Got != 0 {
		t.Errorf("error %v: want a SyncError of 0 of 1 replicas", err)
	}
	if _, held := m.HeldBy(o); held {
		t.Error("an unsynced grant is in the hold table")
	}
	if n := r.int(t, "EXISTS", "sync:a"); n != 0 {
		t.Error("an unsynced grant was left held in Redis")
	}

	// A batch of attempts, sharing one WAIT: none is granted.
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for i := range 8 {
		wg.Go(func() {
			o := c.NewOwner()
			ok, err := c.Mutex("sync:b"+strconv.Itoa(i)).TryLock(ctx, o, 0, 0)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				granted++
			}
			if !errors.Is(err, ErrNotSynced) {
				t.Errorf("attempt %d: %v, want ErrNotSynced", i, err)
			}
		})
	}
	wg.Wait()
	if granted != 0 {
		t.Errorf("%d grants reported with the replica paused", granted)
	}

	// A fenced attempt: no token.
	tok, ok, err := f.TryLock(ctx, fo, 0, 0)
	if ok || tok != 0 || !errors.Is(err, ErrNotSynced) {
		t.Errorf("fenced TryLock with the replica paused = %d, %v, %v; want 0, false, ErrNotSynced", tok, ok, err)
	}

	// Fair and read-write grants likewise: the documented error, no hold.
	fo2 := c.NewOwner()
	if ok, err := c.FairMutex("sync:fair", FairMutexOptions{}).TryLock(ctx, fo2, 0, 0); ok || !errors.Is(err, ErrNotSynced) {
		t.Errorf("fair TryLock with the replica paused = %v, %v; want false, ErrNotSynced", ok, err)
	}
	rw := c.RWMutex("sync:rw")
	ro := c.NewOwner()
	if ok, err := rw.TryRLock(ctx, ro, 0, 0); ok || !errors.Is(err, ErrNotSynced) {
		t.Errorf("TryRLock with the replica paused = %v, %v; want false, ErrNotSynced", ok, err)
	}
	if ok, err := rw.TryLock(ctx, ro, 0, 0); ok || !errors.Is(err, ErrNotSynced) {
		t.Errorf("RWMutex.TryLock with the replica paused = %v, %v; want false, ErrNotSynced", ok, err)
	}
	if n := c.holds.len(); n != 1 {
		t.Errorf("%d holds in the table with the replica paused; want only the one taken before", n)
	}

	// Renewals: the watchdog wakes every 200ms and renews a lease set 300ms ago or more, so a
	// second with the replica paused sends several; none may move the confirmed lease, and the
	// hold is no longer safe to hand over once the lease it can count on runs low.
	waitsBefore := c.snapshot().SyncWaits
	time.Sleep(time.Second)
	s := c.holds.shard("sync:held")
	s.mu.Lock()
	h := s.m["sync:held"]
	var exp int64 = -1
	safe := false
	if h != nil {
		exp, safe = h.expires, c.leaseSafe(h, leaseArgs{watchdog: true}, c.now())
	}
	s.mu.Unlock()
	if exp != exp0 {
		t.Errorf("the confirmed lease moved from %d to %d on renewals the replica never acknowledged", exp0, exp)
	}
	if h == nil {
		t.Error("the hold was dropped as lost: its renewals ran on the master, only the replica missed them")
	}
	if safe {
		t.Error("a hold whose renewals were not synced is still safe to hand over")
	}
	if n := c.snapshot().SyncWaits - waitsBefore; n < 3 {
		t.Errorf("only %d WAITs in a second with a hold to renew every 200ms: the renewals were not retried", n)
	}

	// A release: the documented error, and no hold left behind in Redis.
	if err := held.Unlock(ctx, holder); !errors.Is(err, ErrNotSynced) {
		t.Errorf("Unlock with the replica paused: %v, want ErrNotSynced", err)
	}
	if _, ok := held.HeldBy(holder); ok {
		t.Error("the hold is still in the table after its release")
	}

	r.resume(t)
	paused = false
	// Once the replica has caught up, grants are synced again.
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok, err = m.TryLock(ctx, o, 0, 0)
		if ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !ok || err != nil {
		t.Fatalf("TryLock after the replica resumed = %v, %v", ok, err)
	}
	if !r.onReplicaExists(t, "sync:a") {
		t.Error("a synced grant is not on the replica")
	}
	released(t, m.Unlock(ctx, o))
	top := r.int(t, "GET", "redisson_lock_token:{sync:fenced}")
	var tok2 int64
	untilSynced(t, func() (err error) { tok2, err = f.Lock(ctx, fo); return err })
	if tok2 <= tok1 || tok2 <= top {
		t.Errorf("token after the shortfall %d; want above the first grant's %d and the counter's %d", tok2, tok1, top)
	}
	released(t, f.Unlock(ctx, fo))
	// Every unsynced grant and release was undone or cleared: only the token counter stays.
	deadline = time.Now().Add(5 * time.Second)
	for {
		keys, err := r.do(t, "KEYS", "*sync:*").AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		keys = slices.DeleteFunc(keys, func(k string) bool { return k == "redisson_lock_token:{sync:fenced}" })
		if len(keys) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lock keys left behind after the shortfall: %v", keys)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// untilSynced runs a set-up step of a synced test until it is not refused as unsynced: with a
// 100 ms WAIT timeout the replica, under the whole suite's load, sometimes acknowledges late
// (ErrNotSynced, a correct answer but not the test's subject). An unsynced grant was undone, so
// the step can simply go again; releases go through released instead.
func untilSynced(t *testing.T, step func() error) {
	t.Helper()
	for try := 1; ; try++ {
		err := step()
		if err == nil {
			return
		}
		if !errors.Is(err, ErrNotSynced) || try == 20 {
			t.Fatal(err)
		}
	}
}

// released fails the test on a release's error, but for ErrNotSynced: an unsynced release ran on
// the master and its field is cleared by the Client's resolver (see untilSynced for why the
// replica may be late).
func released(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, ErrNotSynced) {
		t.Fatal(err)
	}
}

// TestSyncOffSendsNoWait checks the opt-out: with SyncOff, no WAIT reaches a master that has a
// replica; and that a master without replicas is not waited for in the default mode.
func TestSyncOffSendsNoWait(t *testing.T) {
	t.Parallel() // a replica pair of its own; mostly waiting on the replica and WAIT timeouts
	r := newReplicated(t)
	alone := newEnv(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		env  *testEnv
		opt  Options
		mode SyncMode
	}{
		{"off with a replica", r.testEnv, Options{Sync: SyncOff}, SyncOff},
		{"auto without replicas", alone, Options{}, SyncWait},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.env.client(t, tc.opt)
			if mode, _ := c.Sync("x"); mode != tc.mode {
				t.Errorf("mode %v, want %v", mode, tc.mode)
			}
			w0 := tc.env.calls(t, "wait")
			m := c.Mutex("nowait")
			o := c.NewOwner()
			for range 5 {
				if err := m.Lock(ctx, o); err != nil {
					t.Fatal(err)
				}
				if err := m.Unlock(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
			if n := tc.env.calls(t, "wait") - w0; n != 0 {
				t.Errorf("%d WAITs sent", n)
			}
		})
	}
}

// TestSyncMasterLeftBehind promotes the replica (REPLICAOF NO ONE, what a fail-over does) while
// the Client still talks to the old master, which then reports no replica at all: a grant there
// is exactly one a fail-over loses, and waiting for the replicas it still has (none) would
// confirm it. The Client keeps waiting for the replica the master had, so the grant falls short
// and is refused.
func TestSyncMasterLeftBehind(t *testing.T) {
	t.Parallel() // a replica pair of its own; mostly waiting on the replica and WAIT timeouts
	r := newReplicated(t)
	c := r.client(t, Options{SyncTimeout: 100 * time.Millisecond, SyncRefresh: 50 * time.Millisecond})
	ctx := t.Context()
	m := c.Mutex("behind")
	o := c.NewOwner()
	// The set-up: one grant and release while the pair is whole (see untilSynced).
	untilSynced(t, func() error { return m.Lock(ctx, o) })
	released(t, m.Unlock(ctx, o))
	if err := r.onReplica.Do(ctx, r.onReplica.B().Replicaof().No().One().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := r.masters[0].Do(ctx, r.masters[0].B().Info().Section("replication").Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		if infoInt(info, "connected_slaves") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the old master still counts its replica 5s after it was promoted")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // several refreshes
	if _, n := c.Sync("behind"); n != 1 {
		t.Errorf("the Client waits for %d replicas on a master that had one and lost it; want 1", n)
	}
	ok, err := m.TryLock(ctx, o, 0, 0)
	if ok || !errors.Is(err, ErrNotSynced) {
		t.Fatalf("TryLock on a master left behind by its replica = %v, %v; want false, ErrNotSynced", ok, err)
	}
	if n := r.int(t, "EXISTS", "behind"); n != 0 {
		t.Error("the refused grant was left held on the old master")
	}
}

func TestReplicaMarks(t *testing.T) {
	var sy syncer
	sec := int64(time.Second)
	for i, step := range []struct {
		node, replid string
		live         int32
		at           int64
		want         int32
	}{
		{"m", "a", 2, 0, 2},
		{"m", "a", 0, 1 * sec, 2},                      // lost its replicas: still wait for 2
		{"m", "a", 1, 10 * sec, 2},                     // one back, still one short
		{"m", "a", 0, 1*sec + int64(replicaForget), 0}, // fewer for replicaForget: taken
		{"m", "a", 3, 40 * sec, 3},                     // more: taken at once
		{"m", "b", 0, 41 * sec, 0},                     // a new replication history starts afresh
		{"n", "x", 1, 41 * sec, 1},                     // masters are apart
		{"m", "b", 1, 42 * sec, 1},
	} {
		if got := sy.expect(step.node, step.replid, step.live, step.at); got != step.want {
			t.Errorf("step %d %+v: expect %d, want %d", i, step, got, step.want)
		}
	}
}
