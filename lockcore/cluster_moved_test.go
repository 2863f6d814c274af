package lockcore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// A synced call on a cluster whose slot map is stale: a slot moved (MOVED), or is moving (ASK),
// from a master whose replicas are healthy to one whose replica is stopped. The script runs on
// the new master; the WAIT must run there too, on the same connection, and fall short. If the
// script alone followed the redirect and the WAIT stayed on the old master, the old master's
// replicas would confirm a write they never saw: a grant lost by the next fail-over of the new
// master, reported synced. Each case has a Client of its own, warmed before the move, so each
// meets the stale map: a Mutex TryLock (the routed single call), a pipeline of script calls of
// two slots (execScriptsSynced: the watchdog's renewals, resendPerSlot), a node batch whose
// moved operation is refused as non-local and resent per slot (resendPerSlot), an Unlock of a
// lock taken before the move, and a TryLock on a slot half-way through its move (ASK). Each must
// report ErrNotSynced for the moved key, as it does when the key's own master's replica is
// stopped, and a synced answer for the key that did not move. With the replica resumed, locks
// on the moved slot are granted and synced.
func TestClusterSyncedMovedSlot(t *testing.T) {
	e, cl, addrs := clusterEnv(t)
	ctx := ctxT(t, 60*time.Second)
	direct := map[string]rueidis.Client{}
	for i, addr := range addrs {
		direct[addr] = e.masters[i]
	}
	opt := Options{Sync: SyncWait, SyncTimeout: 200 * time.Millisecond, SyncRefresh: time.Hour}
	const moved, asked = "{mv}", "{ask}" // hash tags of the slot that moves and the one that is moving
	slot, askSlot := int(keySlot(moved)), int(keySlot(asked))
	src, err := slotOwner(ctx, e.masters[0], slot)
	if err != nil {
		t.Fatal(err)
	}
	dst := others(direct, src)[0]
	if at := mustOwner(t, ctx, e, askSlot); at != src {
		if err := migrateSlot(ctx, direct, at, src, askSlot); err != nil {
			t.Fatalf("bring slot %d to %s: %v", askSlot, src, err)
		}
	}

	clients := map[string]*Client{}
	for _, name := range []string{"lock", "pipeline", "nodebatch", "unlock", "ask"} {
		c := e.client(t, opt)
		if mode, n := c.Sync(moved); mode != SyncWait || n != 1 {
			t.Fatalf("Sync = %v, %d; want wait, 1 replica", mode, n)
		}
		v := c.batch.view.Load()
		if j := v.node[slot]; j < 0 || v.nodes[j].addr != src {
			t.Fatalf("client %s: view puts slot %d elsewhere than %s", name, slot, src)
		}
		clients[name] = c
	}
	// A lock on the moving slot's key, taken while every replica is up, for the unlock case.
	held, heldOwner := clients["unlock"].Mutex(moved+":held"), clients["unlock"].NewOwner()
	if ok, err := held.TryLock(ctx, heldOwner, 0, 30*time.Second); !ok || err != nil {
		t.Fatalf("TryLock before the move: %v, %v", ok, err)
	}

	replica, err := replicaOf(direct[dst])
	if err != nil {
		t.Fatal(err)
	}
	proc, err := os.FindProcess(cl.Pid(replica))
	if err != nil || cl.Pid(replica) == 0 {
		t.Fatalf("replica %s of %s: no process (%v)", replica, dst, err)
	}
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Registered after the cluster's own clean-up, so it runs first: a stopped replica would
	// ignore the SIGTERM that stops it.
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = proc.Signal(syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)

	if err := migrateSlot(ctx, direct, src, dst, slot); err != nil {
		t.Fatalf("move slot %d from %s to %s: %v", slot, src, dst, err)
	}
	// The ASK case's slot is left migrating from src to dst, with no key on src: a script on a
	// key of it is answered ASK by src.
	if err := startMigration(ctx, direct, src, dst, askSlot); err != nil {
		t.Fatalf("start moving slot %d: %v", askSlot, err)
	}
	t.Logf("slot %d moved and slot %d moving from %s to %s; replica %s of %s stopped", slot, askSlot, src, dst, replica, dst)

	notSynced := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotSynced) {
			t.Errorf("%s on the moved slot: err %v; want ErrNotSynced (the new master's replica is stopped)", what, err)
		}
	}

	// The routed single call.
	c := clients["lock"]
	ok, err := c.Mutex(moved+":a").TryLock(ctx, c.NewOwner(), 0, 30*time.Second)
	t.Logf("TryLock on the moved slot: %v, %v", ok, err)
	if ok {
		t.Errorf("TryLock on the moved slot granted and reported synced")
	}
	notSynced("TryLock", err)

	// A pipeline of two slots' calls: one moved, one still on src.
	c = clients["pipeline"]
	stay := keyOn(t, c, "stay:p", src, slot, askSlot)
	o := c.NewOwner()
	field := c.fieldOf(moved+":b", o)
	calls := []scriptCall{
		{keys: []string{moved + ":b"}, args: batchArgs(false, c.publishCmd, "l", "30000", field)},
		{keys: []string{stay}, args: batchArgs(false, c.publishCmd, "l", "30000", field)},
	}
	res, unsynced := c.execScriptsSynced(ctx, []*script{batchScript, batchScript}, calls)
	t.Logf("pipeline: moved call error %v, verdict %v; staying call error %v, verdict %v", res[0].Error(), unsynced[0], res[1].Error(), unsynced[1])
	if unsynced[0] == nil {
		t.Errorf("pipeline call on the moved slot (error %v) reported synced", res[0].Error())
	}
	if unsynced[1] != nil || res[1].Error() != nil {
		t.Errorf("pipeline call on %s, which did not move: error %v, verdict %v; want an answer, synced", stay, res[1].Error(), unsynced[1])
	}

	// A node batch on src with an operation on the moved slot, refused as non-local and resent
	// per slot, and one on a slot src still serves.
	c = clients["nodebatch"]
	if c.batch.cross.Load() != crossOn {
		t.Fatal("node batches off on a Redis 7 cluster")
	}
	stay = keyOn(t, c, "stay:n", src, slot, askSlot)
	o = c.NewOwner()
	ops := []*op{
		c.newOp(opLock, moved+":c", []string{"30000", c.fieldOf(moved+":c", o)}),
		c.newOp(opLock, stay, []string{"30000", c.fieldOf(stay, o)}),
	}
	c.sendNodeBatch(ctx, &opBatch{ops: ops, node: src})
	t.Logf("node batch: moved op %d, %v; staying op %d, %v; %d resent", ops[0].res, ops[0].err, ops[1].res, ops[1].err, c.stats.resent.Load())
	notSynced("node batch operation", ops[0].err)
	if !rueidis.IsRedisNil(ops[1].err) {
		t.Errorf("node batch operation on %s, which did not move: %d, %v; want a synced grant", stay, ops[1].res, ops[1].err)
	}

	// The release of a lock taken before the move.
	err = held.Unlock(ctx, heldOwner)
	t.Logf("Unlock on the moved slot: %v", err)
	notSynced("Unlock", err)

	// ASK: the slot is migrating and the key is not on src.
	c = clients["ask"]
	ok, err = c.Mutex(asked+":a").TryLock(ctx, c.NewOwner(), 0, 30*time.Second)
	t.Logf("TryLock on the migrating slot: %v, %v", ok, err)
	if ok {
		t.Errorf("TryLock on the migrating slot granted and reported synced")
	}
	notSynced("TryLock (ASK)", err)

	// Each routed case met a redirect and followed it itself (the node batch's resend may
	// find the view refreshed by the batch's own stale mark).
	for _, name := range []string{"lock", "pipeline", "unlock", "ask"} {
		if n := clients[name].stats.redirects.Load(); n == 0 {
			t.Errorf("client %s followed no redirect: the case did not test what it says", name)
		}
	}

	// With the replica back, the moved slot's locks are granted and synced.
	resume()
	c = clients["lock"]
	untilSynced(t, func() error {
		ok, err := c.Mutex(moved+":after").TryLock(ctx, c.NewOwner(), 0, time.Second)
		if err == nil && !ok {
			err = fmt.Errorf("not granted")
		}
		return err
	})

	// A master that lost its scripts (SCRIPT FLUSH, as after a restart or fail-over) answers
	// NOSCRIPT on the node's connection: the body goes again there, with a WAIT of its own. A
	// Client of its own, with nothing of the cases above left to settle in the background.
	c = e.client(t, opt)
	e.onMasters(t, "SCRIPT", "FLUSH")
	// A view still stale (CLUSTER SLOTS answered by a node gossip had not reached yet) adds a
	// redirect, and the WAIT of the pipeline that met it.
	waits, redirects := c.stats.syncWaits.Load(), c.stats.redirects.Load()
	ok, err = c.Mutex(moved+":flushed").TryLock(ctx, c.NewOwner(), 0, 30*time.Second)
	if !ok || err != nil {
		t.Errorf("TryLock after SCRIPT FLUSH: %v, %v; want a synced grant", ok, err)
	}
	w, r := c.stats.syncWaits.Load()-waits, c.stats.redirects.Load()-redirects
	if w-r != 2 {
		t.Errorf("TryLock after SCRIPT FLUSH sent %d WAITs and followed %d redirects; want 2 WAITs more than redirects (EVALSHA's, then EVAL's)", w, r)
	}
}

// mustOwner returns the address of the master serving slot.
func mustOwner(t *testing.T, ctx context.Context, e *testEnv, slot int) string {
	t.Helper()
	a, err := slotOwner(ctx, e.masters[0], slot)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// startMigration marks slot MIGRATING on src and IMPORTING on dst, and moves no key: the first
// half of migrateSlot.
func startMigration(ctx context.Context, direct map[string]rueidis.Client, src, dst string, slot int) error {
	do := func(addr string, args ...string) rueidis.RedisResult {
		c := direct[addr]
		return c.Do(ctx, c.B().Arbitrary(args...).Build())
	}
	srcID, err := do(src, "CLUSTER", "MYID").ToString()
	if err != nil {
		return err
	}
	dstID, err := do(dst, "CLUSTER", "MYID").ToString()
	if err != nil {
		return err
	}
	s := strconv.Itoa(slot)
	if err := do(dst, "CLUSTER", "SETSLOT", s, "IMPORTING", srcID).Error(); err != nil {
		return fmt.Errorf("importing: %w", err)
	}
	if err := do(src, "CLUSTER", "SETSLOT", s, "MIGRATING", dstID).Error(); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	return nil
}

// keyOn returns a key starting with prefix, of a slot other than those of not, that the master
// at addr serves in c's view.
func keyOn(t *testing.T, c *Client, prefix, addr string, not ...int) string {
	t.Helper()
	v := c.batch.view.Load()
	for i := 0; i < 1<<16; i++ {
		k := prefix + strconv.Itoa(i)
		s := keySlot(k)
		if j := v.node[s]; !slices.Contains(not, int(s)) && j >= 0 && v.nodes[j].addr == addr {
			return k
		}
	}
	t.Fatalf("no key on %s", addr)
	return ""
}

// movedNode is a node client that answers every script MOVED (a captured reply of a real node)
// and sends the WAIT to the real node: a redirect that never ends.
type movedNode struct {
	rueidis.Client
	moved rueidis.RedisResult
	sends atomic.Int32
}

func (m *movedNode) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	m.sends.Add(1)
	out := make([]rueidis.RedisResult, len(multi))
	for i, cmd := range multi {
		if cmd.Commands()[0] == "WAIT" {
			out[i] = m.Client.Do(ctx, cmd)
			continue
		}
		out[i] = m.moved
	}
	return out
}

// A synced call on a cluster follows at most maxRedirects redirects, then returns the last one
// (a refusal that ran nothing), never looping: here the node the view names answers MOVED to
// itself every time.
func TestClusterSyncedRedirectBound(t *testing.T) {
	e, _, addrs := clusterEnv(t)
	ctx := ctxT(t, 30*time.Second)
	a := e.masters[0]
	var key string
	for i := 0; key == ""; i++ {
		k := "bound:" + strconv.Itoa(i)
		if owner, err := slotOwner(ctx, a, int(keySlot(k))); err != nil {
			t.Fatal(err)
		} else if owner != addrs[0] {
			key = k
		}
	}
	moved := a.Do(ctx, a.B().Get().Key(key).Build())
	re, _ := rueidis.IsRedisErr(moved.Error())
	to, ok := "", false
	if re != nil {
		to, ok = re.IsMoved()
	}
	if !ok {
		t.Fatalf("GET %s on %s: %v; want MOVED", key, addrs[0], moved.Error())
	}
	fake := &movedNode{Client: a, moved: moved}
	view := &clusterView{node: make([]int16, clusterSlots), nodes: []*viewNode{{addr: to, client: fake, replicas: 1}}}
	c := &Client{rdb: e.rdb}
	c.repl.mode, c.repl.timeout = SyncWait, 100
	c.batch.cluster = true
	c.batch.view.Store(view)

	res, unsynced := c.execClusterSynced(ctx, []*script{lockScript}, []scriptCall{{keys: []string{key}, args: []string{"30000", "f"}}})
	if re, ok := rueidis.IsRedisErr(res[0].Error()); !ok || !strings.HasPrefix(re.Error(), "MOVED") {
		t.Errorf("result %v; want the last MOVED", res[0].Error())
	}
	if unsynced[0] != nil {
		t.Errorf("verdict %v for a call that ran nothing; want none", unsynced[0])
	}
	if n := fake.sends.Load(); n != maxRedirects+1 {
		t.Errorf("%d pipelines sent; want %d (the first and %d redirects)", n, maxRedirects+1, maxRedirects)
	}
	if n := c.stats.redirects.Load(); n != maxRedirects {
		t.Errorf("%d redirects followed; want %d", n, maxRedirects)
	}
}
