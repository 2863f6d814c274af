package lockcore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// The cluster fault tests: many goroutines contend on locks of every master while a slot moves
// between masters, or a master fails over, and a checker that does not trust the lock watches.

// faultChecker is an exclusion checker that does not trust the lock: each holder enters a
// name's occupancy after its Lock returned and leaves it before its Unlock, and counts only
// inside the window its lease guarantees (from the start of the call that took it), as
// chaosChecker does.
type faultChecker struct {
	t0         time.Time
	mu         sync.Mutex
	inside     map[string][]faultHold
	violations []string
	samples    []string // the first errors of each class
	grants     atomic.Int64
	lockErrs   sync.Map // error text → *atomic.Int64
	worst      atomic.Int64
}

type faultHold struct {
	id     int64
	winEnd time.Duration
}

func newFaultChecker() *faultChecker {
	return &faultChecker{t0: time.Now(), inside: map[string][]faultHold{}}
}

func (k *faultChecker) since() time.Duration { return time.Since(k.t0) }

// enter records a grant of name to holder id, whose call started at start with lease.
func (k *faultChecker) enter(name string, id int64, start, lease time.Duration) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.since()
	if now >= start+lease {
		return false // came back too late to count: its lease guarantees nothing now
	}
	k.grants.Add(1)
	for _, h := range k.inside[name] {
		if now < h.winEnd {
			k.violations = append(k.violations, fmt.Sprintf("two holders of %q at +%v: %d entering, %d inside", name, now, id, h.id))
		}
	}
	k.inside[name] = append(k.inside[name], faultHold{id: id, winEnd: start + lease})
	return true
}

func (k *faultChecker) leave(name string, id int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	hs := k.inside[name]
	for i, h := range hs {
		if h.id == id {
			k.inside[name] = append(hs[:i], hs[i+1:]...)
			return
		}
	}
}

func (k *faultChecker) violate(s string) {
	k.mu.Lock()
	k.violations = append(k.violations, s)
	k.mu.Unlock()
}

func (k *faultChecker) countErr(what string, err error) {
	n, _ := k.lockErrs.LoadOrStore(what+": "+chaosErrClass(err), new(atomic.Int64))
	if n.(*atomic.Int64).Add(1) <= 3 {
		k.mu.Lock()
		k.samples = append(k.samples, what+": "+err.Error())
		k.mu.Unlock()
	}
}

func (k *faultChecker) errSummary() (string, int64) {
	var s string
	var total int64
	k.lockErrs.Range(func(key, v any) bool {
		n := v.(*atomic.Int64).Load()
		s += fmt.Sprintf(" %s %d;", key, n)
		total += n
		return true
	})
	return s, total
}

// faultLoad is the contending workload of the fault tests.
type faultLoad struct {
	c       *Client
	e       *testEnv
	k       *faultChecker
	names   []string
	lease   time.Duration
	wait    time.Duration
	long    float64 // share of holds of 100–600 ms, to straddle a fault
	checked atomic.Int64
	bound   time.Duration // how long past its wait a TryLock may return
}

// run starts workers goroutines that lock and unlock the names until stop closes; the
// returned function waits for them, failing the test if they do not stop within 30 s.
func (l *faultLoad) run(t *testing.T, workers int, stop chan struct{}) func() {
	var wg sync.WaitGroup
	var ids atomic.Int64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			o := l.c.NewOwner()
			for {
				select {
				case <-stop:
					return
				default:
				}
				name := l.names[rng.IntN(len(l.names))]
				m := l.c.Mutex(name)
				id := ids.Add(1)
				start := l.k.since()
				ctx, cancel := context.WithTimeout(context.Background(), l.wait+l.bound)
				ok, err := m.TryLock(ctx, o, l.wait, l.lease)
				cancel()
				took := l.k.since() - start
				if over := took - l.wait; over > time.Duration(l.k.worst.Load()) {
					l.k.worst.Store(int64(over))
				}
				if took > l.wait+l.bound {
					l.k.violate(fmt.Sprintf("TryLock of %q returned %v after it started (wait %v, bound %v)", name, took, l.wait, l.bound))
				}
				checkNoNonLocal(t, err)
				if err != nil {
					l.k.countErr("lock", err)
					continue
				}
				if !ok {
					continue
				}
				if l.k.enter(name, id, start, l.lease) {
					hold := time.Duration(rng.IntN(3000)) * time.Microsecond
					if rng.Float64() < l.long {
						hold = time.Duration(100+rng.IntN(500)) * time.Millisecond
					}
					if rng.IntN(8) == 0 || hold > 50*time.Millisecond {
						l.verify(name, m, o, start, l.lease)
					}
					time.Sleep(hold)
					if hold > 50*time.Millisecond {
						l.verify(name, m, o, start, l.lease)
					}
					l.k.leave(name, id)
				}
				ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
				err = m.Unlock(ctx, o)
				cancel()
				checkNoNonLocal(t, err)
				if err != nil {
					l.k.countErr("unlock", err)
				}
			}
		}()
	}
	return func() {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			t.Fatal("workers still running 30 s after the end of the run")
		}
	}
}

// verify checks, through the routed inspection client, that Redis counts the hold just
// granted: a grant the caller was told of and Redis does not have is a lost grant. A failed
// read (the master is down) proves nothing either way.
func (l *faultLoad) verify(name string, m *Mutex, o Owner, start, lease time.Duration) {
	field, _ := m.holdField(o)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	n, err := l.e.rdb.Do(ctx, l.e.rdb.B().Hget().Key(name).Field(field).Build()).AsInt64()
	if l.k.since() >= start+lease-100*time.Millisecond {
		return // the lease may have run out meanwhile
	}
	if rueidis.IsRedisNil(err) || err == nil && n < 1 {
		l.k.violate(fmt.Sprintf("grant of %q to %s lost: Redis counts %d holds", name, field, n))
	}
	if err == nil || rueidis.IsRedisNil(err) {
		l.checked.Add(1)
	}
}

// slotOwner returns the address of the master that serves slot, as rdb's node reports it.
func slotOwner(ctx context.Context, rdb rueidis.Client, slot int) (string, error) {
	slots, err := rdb.Do(ctx, rdb.B().ClusterSlots().Build()).ToArray()
	if err != nil {
		return "", err
	}
	for _, r := range slots {
		rng, _ := r.ToArray()
		lo, _ := rng[0].AsInt64()
		hi, _ := rng[1].AsInt64()
		if int64(slot) >= lo && int64(slot) <= hi {
			m, _ := rng[2].ToArray()
			host, _ := m[0].ToString()
			port, _ := m[1].AsInt64()
			return net.JoinHostPort(host, strconv.FormatInt(port, 10)), nil
		}
	}
	return "", fmt.Errorf("slot %d unassigned", slot)
}

// migrateSlot moves slot from the master at src to the master at dst as redis-cli --cluster
// reshard does: IMPORTING on dst, MIGRATING on src, MIGRATE of its keys in rounds, then SETSLOT
// NODE on dst, src and every other master.
func migrateSlot(ctx context.Context, direct map[string]rueidis.Client, src, dst string, slot int) error {
	do := func(addr string, args ...string) rueidis.RedisResult {
		c := direct[addr]
		return c.Do(ctx, c.B().Arbitrary(args...).Build())
	}
	if err := startMigration(ctx, direct, src, dst, slot); err != nil {
		return err
	}
	dstID, err := do(dst, "CLUSTER", "MYID").ToString()
	if err != nil {
		return err
	}
	s := strconv.Itoa(slot)
	host, port, _ := net.SplitHostPort(dst)
	for {
		keys, err := do(src, "CLUSTER", "GETKEYSINSLOT", s, "100").AsStrSlice()
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			break
		}
		args := append([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}, keys...)
		if err := do(src, args...).Error(); err != nil {
			return fmt.Errorf("MIGRATE %v: %w", keys, err)
		}
	}
	for _, addr := range append([]string{dst, src}, others(direct, src, dst)...) {
		if err := do(addr, "CLUSTER", "SETSLOT", s, "NODE", dstID).Error(); err != nil {
			return fmt.Errorf("SETSLOT NODE on %s: %w", addr, err)
		}
	}
	return nil
}

func others(direct map[string]rueidis.Client, not ...string) []string {
	var out []string
next:
	for a := range direct {
		for _, n := range not {
			if a == n {
				continue next
			}
		}
		out = append(out, a)
	}
	return out
}

// (a) A slot moves back and forth between two masters, by MIGRATING/IMPORTING, MIGRATE and
// SETSLOT NODE, while 64 goroutines contend on locks of that slot and of every master. Node
// batches meet the slot in every state: owned, migrating with the key here or gone, moved with
// a stale view. The checker must see no two holders, every grant it reads back in Redis, no
// call past its bound, and no refusal reaching a caller; the keyspace ends clean.
func TestClusterSlotMigrationUnderLoad(t *testing.T) {
	e, _, addrs := clusterEnv(t)
	c := e.client(t, Options{Sync: SyncOff, SyncRefresh: 200 * time.Millisecond})
	if c.batch.cross.Load() != crossOn {
		t.Fatal("node batches off on a Redis 7 cluster")
	}
	ctx := ctxT(t, 120*time.Second)
	direct := map[string]rueidis.Client{}
	for i, addr := range addrs {
		direct[addr] = e.masters[i]
	}
	slot := int(keySlot("mig"))
	var names []string
	for i := range 8 {
		names = append(names, fmt.Sprintf("{mig}:%d", i))
	}
	for i := range 40 {
		names = append(names, fmt.Sprintf("mig:k%d", i))
	}
	k := newFaultChecker()
	l := &faultLoad{c: c, e: e, k: k, names: names, lease: 10 * time.Second, wait: 2 * time.Second, bound: 3 * time.Second}
	stop := make(chan struct{})
	wait := l.run(t, 64, stop)

	moves := 0
	end := time.Now().Add(8 * time.Second)
	for time.Now().Before(end) || moves < 4 {
		time.Sleep(time.Duration(100+rand.IntN(200)) * time.Millisecond)
		src, err := slotOwner(ctx, e.masters[0], slot)
		if err != nil {
			t.Fatal(err)
		}
		dst := others(direct, src)[rand.IntN(2)]
		if err := migrateSlot(ctx, direct, src, dst, slot); err != nil {
			close(stop)
			wait()
			t.Fatalf("move slot %d from %s to %s: %v", slot, src, dst, err)
		}
		moves++
	}
	before := k.grants.Load()
	time.Sleep(time.Second)
	close(stop)
	wait()
	errs, nerr := k.errSummary()
	for _, e := range k.samples {
		t.Log(e)
	}
	t.Logf("%d slot moves; %d grants (%d checked in Redis); %d batches across slots, %d operations resent; worst TryLock past its wait %v; errors:%s",
		moves, k.grants.Load(), l.checked.Load(), c.stats.nodeBatches.Load(), c.stats.resent.Load(), time.Duration(k.worst.Load()), errs)
	for _, v := range k.violations {
		t.Error(v)
	}
	if nerr != 0 {
		t.Errorf("%d lock or unlock calls failed while a slot moved (no fault but the move)", nerr)
	}
	if k.grants.Load() == before {
		t.Error("no grant in the second after the last move")
	}
	if c.stats.nodeBatches.Load() == 0 || c.stats.resent.Load() == 0 {
		t.Errorf("%d node batches, %d operations resent: the run did not test what it says", c.stats.nodeBatches.Load(), c.stats.resent.Load())
	}
	e.assertNoKeys(t)
}

// (b) In synced mode, a master is killed during the run and its replica takes over, while 64
// goroutines contend on locks of every master, a fifth of the holds 100–600 ms. The replica is
// paused (SIGSTOP) and cut off (CLIENT KILL TYPE replica) 400 ms before the kill and resumed
// after it, so that it is promoted without the writes of that window; in that window eight
// more owners try locks of the victim's slots, to hold them across the fail-over. Grants the
// master made then are never confirmed (their WAIT falls short: the Client still expects the
// replica it had, see syncer.expect), so none of those eight may be granted, and every grant
// confirmed by a node batch's WAIT survives on the promoted replica: the checker must see no
// two holders and read back every grant it checks; every call returns within its bound; after
// the leases, no lock key is left. (With lockcore:sync=off the eight are granted, and lost:
// the checker reports them, which is what it is there to catch.)
func TestClusterFailoverSynced(t *testing.T) {
	e, cl, addrs := clusterEnv(t)
	masters := cl.Masters
	opt := Options{SyncRefresh: 200 * time.Millisecond, SyncTimeout: 100 * time.Millisecond}
	opt.Redis.ConnWriteTimeout = time.Second
	opt.Redis.Dialer.Timeout = time.Second
	c := e.client(t, opt)
	if mode, n := c.Sync("a"); mode != SyncWait || n != 1 || c.batch.cross.Load() != crossOn {
		t.Fatalf("Sync = %v, %d; cross %d: want wait, 1 replica, node batches on", mode, n, c.batch.cross.Load())
	}
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("fo:k%d", i))
	}
	k := newFaultChecker()
	lease := 3 * time.Second
	l := &faultLoad{c: c, e: e, k: k, names: names, lease: lease, wait: time.Second, long: 0.2,
		bound: c.syncDeadline() + 2*time.Second}
	stop := make(chan struct{})
	wait := l.run(t, 64, stop)
	time.Sleep(2 * time.Second)
	waitsBefore := c.stats.syncWaits.Load()
	nodeBefore := c.stats.nodeBatches.Load()
	victim := addrs[0]
	replica, err := replicaOf(e.masters[0])
	if err != nil {
		t.Fatal(err)
	}
	proc, err := os.FindProcess(cl.Pid(replica))
	if err != nil || cl.Pid(replica) == 0 {
		t.Fatalf("replica %s of %s: no process (%v)", replica, victim, err)
	}
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Cut the link too: a stopped replica's socket still takes in what the master sends, and
	// would read it when resumed.
	if err := e.masters[0].Do(ctxT(t, 5*time.Second), e.masters[0].B().ClientKill().TypeReplica().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	promoted := make(chan struct{})
	var straddled atomic.Int64
	var swg sync.WaitGroup
	v := c.batch.view.Load()
	for i, n := 0, 0; n < 8; i++ {
		name := fmt.Sprintf("fo:s%d", i)
		if j := v.node[keySlot(name)]; j < 0 || v.nodes[j].addr != victim {
			continue
		}
		n++
		swg.Add(1)
		go func() {
			defer swg.Done()
			const slease = 12 * time.Second
			o, m := c.NewOwner(), c.Mutex(name)
			start := k.since()
			ok, err := m.TryLock(context.Background(), o, 0, slease)
			if err != nil || !ok {
				return
			}
			straddled.Add(1)
			id := -int64(1000 + i)
			k.enter(name, id, start, slease)
			<-promoted
			time.Sleep(500 * time.Millisecond)
			l.verify(name, m, o, start, slease)
			k.leave(name, id)
			_ = m.Unlock(ctxT(t, 10*time.Second), o)
		}()
	}
	time.Sleep(400 * time.Millisecond)
	if err := cl.Kill(victim); err != nil {
		t.Fatal(err)
	}
	if err := proc.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	deadline := killed.Add(30 * time.Second)
	for {
		ms := masters()
		if len(ms) == 3 && !contains(ms, victim) {
			break
		}
		if time.Now().After(deadline) {
			close(stop)
			wait()
			t.Fatalf("no fail-over 30 s after killing %s: masters %v", victim, ms)
		}
		time.Sleep(100 * time.Millisecond)
	}
	tookOver := time.Since(killed)
	close(promoted)
	swg.Wait()
	grantsAt := k.grants.Load()
	time.Sleep(3 * time.Second)
	close(stop)
	wait()
	errs, _ := k.errSummary()
	for _, e := range k.samples {
		t.Log(e)
	}
	t.Logf("fail-over of %s took %v; %d grants (%d after it, %d checked in Redis); %d batches across slots (%d before the kill), %d WAITs (%d before), %d not synced, %d resent; worst TryLock past its wait %v; errors:%s",
		victim, tookOver.Round(time.Millisecond), k.grants.Load(), k.grants.Load()-grantsAt, l.checked.Load(),
		c.stats.nodeBatches.Load(), nodeBefore, c.stats.syncWaits.Load(), waitsBefore, c.stats.notSynced.Load(),
		c.stats.resent.Load(), time.Duration(k.worst.Load()), errs)
	for _, v := range k.violations {
		t.Error(v)
	}
	if n := straddled.Load(); n != 0 {
		t.Errorf("%d locks granted while the replica was cut off: their grants were never on it", n)
	}
	if nodeBefore == 0 || waitsBefore == 0 {
		t.Errorf("%d node batches and %d WAITs before the kill: the run did not test synced node batches", nodeBefore, waitsBefore)
	}
	if k.grants.Load() == grantsAt {
		t.Error("no grant after the fail-over")
	}
	// Locks whose release met the dead master are left for their leases; then Redis is clean.
	time.Sleep(lease + 500*time.Millisecond)
	for _, addr := range masters() {
		m, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true})
		if err != nil {
			t.Fatal(err)
		}
		keys, err := m.Do(ctxT(t, 5*time.Second), m.B().Keys().Pattern("*").Build()).AsStrSlice()
		m.Close()
		if err != nil || len(keys) != 0 {
			t.Errorf("master %s after the leases: keys %v, %v", addr, keys, err)
		}
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// replicaOf returns the address of the first replica the master reports (INFO replication).
func replicaOf(master rueidis.Client) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := master.Do(ctx, master.B().Info().Section("replication").Build()).ToString()
	if err != nil {
		return "", err
	}
	v, ok := infoField(info, "slave0")
	if !ok {
		return "", fmt.Errorf("master reports no replica: %s", info)
	}
	var ip, port string
	for _, kv := range strings.Split(strings.TrimSpace(v), ",") {
		k, val, _ := strings.Cut(kv, "=")
		switch k {
		case "ip":
			ip = val
		case "port":
			port = val
		}
	}
	return net.JoinHostPort(ip, port), nil
}
