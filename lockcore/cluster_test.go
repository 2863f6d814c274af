package lockcore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

// viewOf builds a clusterView over b: slots [lo[i], lo[i+1]) served by node i, addresses
// "n0", "n1", ...; slots in hole are served by nobody known.
func viewOf(b *batcher, lo []int, hole int) *clusterView {
	v := &clusterView{node: make([]int16, clusterSlots)}
	for i := range lo {
		hi := clusterSlots
		if i+1 < len(lo) {
			hi = lo[i+1]
		}
		n := &viewNode{addr: fmt.Sprintf("n%d", i), group: b.nodeGroup(fmt.Sprintf("n%d", i))}
		v.nodes = append(v.nodes, n)
		for s := lo[i]; s < hi; s++ {
			v.node[s] = int16(i)
		}
	}
	if hole >= 0 {
		v.node[hole] = -1
	}
	return v
}

// keyIn returns a key of the given slot.
func keyIn(slot uint16) string {
	for i := 0; ; i++ {
		if k := fmt.Sprintf("k%d", i); keySlot(k) == slot {
			return k
		}
	}
}

// Grouping: with cross-slot batches on, the locks of every slot a master serves share its
// group, the same one across view refreshes; a slot the view does not place, or any slot
// while the probe has not answered or refused, keeps a group of its own.
func TestClusterGrouping(t *testing.T) {
	var b batcher
	b.init(true)
	b.view.Store(viewOf(&b, []int{0, 5461, 10923}, 7000))
	a1, a2 := keyIn(10), keyIn(5000)     // node 0
	b1, hole := keyIn(6000), keyIn(7000) // node 1; unplaced
	c1 := keyIn(16000)                   // node 2
	for _, st := range []int32{crossUnknown, crossOff} {
		b.cross.Store(st)
		if b.group(a1) == b.group(a2) || b.group(a1).node != "" {
			t.Fatalf("state %d: two slots share a group, or a slot group names a node", st)
		}
		if b.group(a1) != b.group(a1) {
			t.Fatalf("state %d: one slot, two groups", st)
		}
	}
	b.cross.Store(crossOn)
	if g := b.group(a1); g != b.group(a2) || g.node != "n0" {
		t.Fatalf("keys of node 0's slots: groups %p %p, node %q", b.group(a1), b.group(a2), g.node)
	}
	if b.group(b1).node != "n1" || b.group(c1).node != "n2" || b.group(a1) == b.group(c1) {
		t.Fatal("keys of other nodes do not get their nodes' groups")
	}
	if g := b.group(hole); g.node != "" || g != b.group(hole) {
		t.Fatalf("an unplaced slot's key got group of node %q", g.node)
	}
	// A refresh that moves slot 10 to node 2 keeps every node's group.
	g0, g2 := b.group(a2), b.group(c1)
	v := viewOf(&b, []int{0, 5461, 10923}, -1)
	for s := range 11 {
		v.node[s] = 2
	}
	b.view.Store(v)
	if b.group(a2) != g0 {
		t.Fatal("node 0's group changed with the refresh")
	}
	if b.group(a1) != g2 || b.group(c1) != g2 {
		t.Fatal("slot 10, moved to node 2, is not in node 2's group, or node 2's group changed")
	}
}

func TestOneSlotAndProbeKey(t *testing.T) {
	ops := func(names ...string) []*op {
		var out []*op
		for _, n := range names {
			out = append(out, &op{name: n})
		}
		return out
	}
	if !oneSlot(ops("{t}a", "{t}b", "x{t}")) || oneSlot(ops("{t}a", "a")) || !oneSlot(ops("a")) {
		t.Fatal("oneSlot")
	}
	var b batcher
	b.init(true)
	v := viewOf(&b, []int{0, 8192}, -1)
	k, foreign := probeKey(v, v.nodes[0])
	if !foreign || keySlot(k) < 8192 {
		t.Fatalf("probe key %q (slot %d) for node 0: foreign %v", k, keySlot(k), foreign)
	}
	one := viewOf(&b, []int{0}, -1)
	if _, foreign := probeKey(one, one.nodes[0]); foreign {
		t.Fatal("a one-master view has no foreign slot")
	}
}

// refusedWhole and misplaced sort the server's refusals: the texts come from a real server,
// as error replies of a script, so that rueidis parses them as it parses the real ones.
func TestClusterRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t, 10*time.Second)
	reply := func(text string) rueidis.RedisResult {
		return e.rdb.Do(ctx, e.rdb.B().Eval().Script("return redis.error_reply(ARGV[1])").Numkeys(0).Arg(text).Build())
	}
	for text, want := range map[string][2]bool{
		"MOVED 3999 127.0.0.1:6381":                                                            {true, false},
		"ASK 3999 127.0.0.1:6381":                                                              {true, false},
		"TRYAGAIN Multiple keys request during rehashing":                                      {true, false},
		"CROSSSLOT Keys in request don't hash to the same slot":                                {true, false},
		"CLUSTERDOWN The cluster is down":                                                      {true, false},
		"READONLY You can't write against a read only replica.":                                {true, false},
		"OOM command not allowed when used memory > 'maxmemory'.":                              {true, false},
		"BUSY Redis is busy running a script.":                                                 {true, false},
		"LOADING Redis is loading the dataset in memory":                                       {true, false},
		"NOREPLICAS Not enough good replicas to write.":                                        {true, false},
		"ERR Unexpected flag in script shebang: allow-cross-slot-keys":                         {true, true},
		"ERR Error compiling script (new function): user_script:1: unexpected symbol near '#'": {true, true},
		"ERR Error running script (call to f_x): @user_script:3: boom":                         {false, false},
		"WRONGTYPE Operation against a key holding the wrong kind of value":                    {false, false},
	} {
		resend, flagless := refusedWhole(reply(text).Error())
		if resend != want[0] || flagless != want[1] {
			t.Errorf("refusedWhole(%q) = %v, %v; want %v, %v", text, resend, flagless, want[0], want[1])
		}
	}
	if r, f := refusedWhole(context.DeadlineExceeded); r || f {
		t.Error("a call with no answer counted as refused before it ran")
	}
	for text, want := range map[string]bool{
		"ERR Script attempted to access a non local key in a cluster node script: pttl": true,
		"ERR Script attempted to execute a command while the cluster is down":           true,
		"WRONGTYPE Operation against a key holding the wrong kind of value":             false,
		"ERR value is not an integer or out of range":                                   false,
	} {
		v, _ := e.rdb.Do(ctx, e.rdb.B().Eval().Script("return {redis.error_reply(ARGV[1])}").Numkeys(0).Arg(text).Build()).ToArray()
		if got := misplaced(v[0]); got != want {
			t.Errorf("misplaced(%q) = %v, want %v", text, got, want)
		}
	}
}

// A server that runs nodeBatchScript without checking its keys against the slots it serves
// (here a plain server posing as two masters of a view) must turn node batches off.
func TestClusterProbeRefusesUncheckedServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(t, Options{Sync: SyncOff}) // no refresher: the test alone touches c.batch
	c.batch.init(true)
	v := viewOf(&c.batch, []int{0, 8192}, -1)
	for _, n := range v.nodes {
		n.client = e.rdb
	}
	c.batch.view.Store(v)
	c.probeCross(ctxT(t, 5*time.Second))
	if got := c.batch.cross.Load(); got != crossOff {
		t.Fatalf("cross state %d after probing a server that ran a foreign key; want off (%d)", got, crossOff)
	}
	e.assertNoKeys(t)
}

// clusterEnv starts a 3-master cluster with a replica each for one test; the env's masters are
// the cluster's, in the order of addrs.
func clusterEnv(t testing.TB) (e *testEnv, cl *compose.Cluster, addrs []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a 6-node cluster")
	}
	cl = redistest.NewCluster(t)
	addrs = cl.Masters()
	return newEnvFor(t, rueidis.ClientOption{InitAddress: cl.Addrs()}, addrs, true), cl, addrs
}

// On a real cluster: the probe turns node batches on; nodeBatchScript runs operations of
// several slots of one master with batchScript's effects, answers an operation on another
// master's slot with a non-local refusal that wrote nothing, and a Mutex workload over many
// slots goes out in node batches with mutual exclusion and a clean keyspace.
func TestNodeBatchesOnCluster(t *testing.T) {
	e, _, _ := clusterEnv(t)
	c := e.client(t, Options{})
	if got := c.batch.cross.Load(); got != crossOn {
		t.Fatalf("cross state %d on a Redis 7 cluster; want on", got)
	}
	ctx := ctxT(t, 60*time.Second)
	v := c.batch.view.Load()
	n := v.nodes[v.node[keySlot("a")]]
	var own []string
	var foreign string
	for i := 0; len(own) < 3 || foreign == ""; i++ {
		k := fmt.Sprintf("nb:%d", i)
		if v.nodes[v.node[keySlot(k)]] == n {
			if len(own) < 3 {
				own = append(own, k)
			}
		} else if foreign == "" {
			foreign = k
		}
	}
	// The renewal's lease differs from the others': it goes as an operation with a lease of its own.
	args := batchArgs(true, "spublish", own[0], "l", "5000", "f1", foreign, "l", "5000", "f1", own[1], "l", "5000", "f1",
		own[0], "l", "5000", "f2", own[2], "r", "7000", "f1", own[1], "u", "5000", "f1")
	vals, err := nodeBatchScript.exec(ctx, n.client, nil, args).ToArray()
	if err != nil || len(vals) != 6 {
		t.Fatalf("node batch: %v, %d replies", err, len(vals))
	}
	if !vals[0].IsNil() || !vals[2].IsNil() {
		t.Fatalf("grants replied %v, %v; want nil", vals[0], vals[2])
	}
	if !misplaced(vals[1]) {
		t.Fatalf("operation on another master's slot replied %v; want a non-local refusal", vals[1])
	}
	if n, err := vals[3].AsInt64(); err != nil || n <= 0 {
		t.Fatalf("attempt on a held lock replied %v, %v; want its PTTL", n, err)
	}
	if n, err := vals[4].AsInt64(); err != nil || n != 0 {
		t.Fatalf("renewal of a lock not held replied %v, %v; want 0", n, err)
	}
	if n, err := vals[5].AsInt64(); err != nil || n != 1 {
		t.Fatalf("release replied %v, %v; want 1", n, err)
	}
	if e.int(t, "EXISTS", foreign) != 0 || e.int(t, "HGET", own[0], "f1") != 1 || e.int(t, "EXISTS", own[1]) != 0 {
		t.Fatal("keyspace after the node batch differs from the operations' effects")
	}
	e.do(t, "DEL", own[0])

	// A workload over many slots: node batches form, exclusion holds.
	const keys = 200
	exclusiveWorkload(t, ctx, c, "nbw", 64, 60, keys)
	s := c.snapshot()
	if c.stats.nodeBatches.Load() == 0 {
		t.Fatalf("no node batch over %d keys: %+v", keys, s)
	}
	t.Logf("%d batches (%d across slots) carried %d operations; %d resent", s.Batches, c.stats.nodeBatches.Load(), s.BatchedOps, c.stats.resent.Load())
	e.assertNoKeys(t)

	// A Client kept per slot never sends a node batch.
	ps := e.client(t, Options{slotBatches: true})
	if ps.batch.cross.Load() != crossOff {
		t.Fatal("slotBatches Client probed cross-slot batches")
	}
}

// checkNoNonLocal fails if err shows a refusal that lockcore should have resent.
func checkNoNonLocal(t *testing.T, err error) {
	t.Helper()
	if err != nil && (strings.Contains(err.Error(), "non local key") || strings.Contains(err.Error(), "MOVED") ||
		strings.Contains(err.Error(), "ASK ")) {
		t.Errorf("a refusal reached the caller: %v", err)
	}
}

// A cluster of one node, which never met another, answers CLUSTER SLOTS with an empty host for
// itself. Its slots must still map to it, so that batches span them: they went per slot, one
// operation a call on 10,000 keys (lockbench measured 1.99 EVALSHA per acquisition).
func TestNodeBatchesOnOneNodeCluster(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t, "--cluster-enabled", "yes")
	ctx := ctxT(t, 20*time.Second)
	node, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr()}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	if err := node.Do(ctx, node.B().ClusterAddslotsrange().StartSlotEndSlot().StartSlotEndSlot(0, clusterSlots-1).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		info, _ := node.Do(ctx, node.B().ClusterInfo().Build()).ToString()
		return strings.Contains(info, "cluster_state:ok")
	})
	slots, err := node.Do(ctx, node.B().ClusterSlots().Build()).ToArray()
	if err != nil || len(slots) != 1 {
		t.Fatalf("CLUSTER SLOTS: %v, %v", slots, err)
	}
	if m, _ := slots[0].ToArray(); len(m) < 3 {
		t.Fatalf("CLUSTER SLOTS range %v", m)
	} else if master, _ := m[2].ToArray(); len(master) < 1 {
		t.Fatalf("CLUSTER SLOTS master %v", master)
	} else if host, _ := master[0].ToString(); host != "" {
		t.Fatalf("redis-server names the node %q, not the empty host this test is about", host)
	}

	e := newEnvFor(t, rueidis.ClientOption{InitAddress: []string{srv.Addr()}}, []string{srv.Addr()}, true)
	c := e.client(t, Options{})
	if got := c.batch.cross.Load(); got != crossOn {
		t.Fatalf("cross state %d on a Redis 7 cluster of one node; want on", got)
	}
	v := c.batch.view.Load()
	for _, k := range []string{"a", "b", "c"} {
		if v == nil || v.node[keySlot(k)] < 0 {
			t.Fatalf("slot of %q maps to no node with a client in the view", k)
		}
	}
	exclusiveWorkload(t, ctx, c, "one", 16, 20, 64)
	if c.stats.nodeBatches.Load() == 0 {
		t.Fatalf("no node batch on a cluster of one node: %+v", c.snapshot())
	}
}

// On a cluster whose masters have replicas, a synced Client's batches to each master leave when
// a call returns, one in flight (a WAIT follows each); an unsynced Client's, or one told to
// gather everywhere (BatchInFlight -1), gather. Exclusion holds in the synced mode's batches.
func TestSyncedClusterBatchesOnReturn(t *testing.T) {
	e, _, _ := clusterEnv(t)
	synced := e.client(t, Options{})
	for _, tc := range []struct {
		name string
		c    *Client
		want int
	}{
		{"synced", synced, 1},
		{"sync off", e.client(t, Options{Sync: SyncOff}), 0},
	} {
		v := tc.c.batch.view.Load()
		if v == nil || len(v.nodes) != 3 {
			t.Fatalf("%s: view %+v; want 3 masters", tc.name, v)
		}
		for _, n := range v.nodes {
			if n.replicas == 0 && tc.want == 1 {
				t.Fatalf("%s: master %s counted no replica", tc.name, n.addr)
			}
			if n.group.onReturn != tc.want {
				t.Errorf("%s: master %s batches on return %d; want %d", tc.name, n.addr, n.group.onReturn, tc.want)
			}
		}
	}

	ctx := ctxT(t, 30*time.Second)
	const workers, rounds = 32, 40
	exclusiveWorkload(t, ctx, synced, "ret", workers, rounds, 100)
	if s := synced.snapshot(); s.Batches == 0 {
		t.Fatalf("no batch in %d acquisitions by %d workers: %+v", workers*rounds, workers, s)
	}
	e.assertNoKeys(t)
}

// exclusiveWorkload has workers goroutines take and release rounds locks each, over keys names
// "prefix:N" spread across slots, and fails t on an error or on two holders of one name at once.
func exclusiveWorkload(t *testing.T, ctx context.Context, c *Client, prefix string, workers, rounds, keys int) {
	t.Helper()
	occupancy := make([]atomic.Int32, keys)
	var violations atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := c.NewOwner()
			for i := range rounds {
				k := (w*31 + i*7) % keys
				m := c.Mutex(fmt.Sprintf("%s:%d", prefix, k))
				if err := m.Lock(ctx, o); err != nil {
					errs <- err
					return
				}
				if occupancy[k].Add(1) != 1 {
					violations.Add(1)
				}
				occupancy[k].Add(-1)
				if err := m.Unlock(ctx, o); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := violations.Load(); n != 0 {
		t.Fatalf("%d mutual exclusion violations", n)
	}
}
