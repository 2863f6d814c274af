package lockcore

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// Batches across the slots of one cluster node.
//
// A script may declare keys of one hash slot only, so batches cut per slot would hold one
// operation each with many locks over 16,384 slots. Instead, on a Redis 7 cluster, the Mutex
// operations of all slots served by one master share a batch group, and a batch of several
// slots goes to that master as one nodeBatchScript call (numkeys 0, flag allow-cross-slot-keys;
// see batch_scripts.go), followed in synced mode by one WAIT for that master's replicas.
//
// The slot → master map is the Client's own, from CLUSTER SLOTS (asked in New and every
// Options.SyncRefresh, and at once when a batch finds it stale): rueidis keeps its slot map to
// itself, and gives one client per node (Nodes), on the connections its cluster client uses.
// A node batch goes straight to that node's client, never redirected: rueidis's redirects
// would move the script but not the WAIT behind it.
//
// Safety does not rest on the map. Redis checks every command a script runs against its own
// cluster state; an operation whose key the node does not serve (the map was stale, the slot
// moved or is migrating and the key is not there, the cluster is down) fails at its first
// command, having written nothing (see nodeBatchScript), and a call the server refuses as a
// whole (MOVED and ASK cannot happen with no declared key; READONLY from a master turned
// replica, OOM, CLUSTERDOWN, BUSY, LOADING...) ran nothing. Those operations are sent again,
// grouped per slot, as without node batches: through the routed path (batchScript by the
// cluster client, which follows MOVED and ASK) when not synced; in synced mode to each slot's
// master with the WAIT on the same connection, lockcore following MOVED and ASK itself
// (sync_cluster.go). A call without an answer is of unknown outcome and is settled as any
// other (doubt.go); it is never sent again.
//
// Whether the server takes the script is probed once per Client, before the first node batch
// (probeCross): a node is asked to run an operation on a key of a slot another master serves,
// and must refuse it as non-local. A server that does not know the shebang or the flag (before
// Redis 7.0), or that ran the operation, turns node batches off for the Client's lifetime:
// batches are then cut per slot as before. Until the probe has answered, batches are per slot.

// Cross-slot batching states (batcher.cross).
const (
	crossUnknown int32 = iota // not probed yet: batches per slot
	crossOn                   // batches per node
	crossOff                  // refused: batches per slot for the Client's lifetime
)

// clusterView is one CLUSTER SLOTS answer: which master serves each slot, and per master its
// rueidis client and replica count.
type clusterView struct {
	// node is, per slot, the index in nodes of its master, or -1 when no node client serves
	// it (the slot is unassigned, or rueidis does not know the master yet): its operations
	// batch per slot.
	node  []int16
	nodes []*viewNode
	aof   bool // every master has AOF on (SyncAOF's local count)
}

// viewNode is one master of a clusterView.
type viewNode struct {
	addr     string
	client   rueidis.Client // nil when rueidis does not know the address
	replicas int32          // the count to WAIT for (syncer.expect); 0 when not syncing
	group    *batchGroup    // the node's batch group, the same across refreshes
}

// nodeOf returns the view's master at addr, or nil.
func (v *clusterView) nodeOf(addr string) *viewNode {
	for _, n := range v.nodes {
		if n.addr == addr {
			return n
		}
	}
	return nil
}

// nodeGroup returns the batch group of the master at addr, made on first use. Only the
// refresh (New, then the refresher goroutine) calls it.
func (b *batcher) nodeGroup(addr string) *batchGroup {
	if b.nodeGroups == nil {
		b.nodeGroups = map[string]*batchGroup{}
	}
	g := b.nodeGroups[addr]
	if g == nil {
		g = &batchGroup{node: addr}
		b.nodeGroups[addr] = g
	}
	return g
}

// stale asks the refresher for a new view soon: a batch met a slot its view had wrong.
func (b *batcher) stale() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// refreshGap is the shortest time between two view refreshes asked by stale: during a slot
// migration every batch may ask.
const refreshGap = 100 * time.Millisecond

// refreshCluster asks CLUSTER SLOTS for each slot's master and installs the Client's views:
// the slot → master map of node batches, and, in synced mode, each master's replica count (its
// INFO replication) per slot, both from the same answer.
func (c *Client) refreshCluster(ctx context.Context) error {
	slots, err := c.rdb.Do(ctx, c.rdb.B().ClusterSlots().Build().Pin()).ToArray()
	if err != nil {
		return fmt.Errorf("lockcore: ask the cluster for its slots: %w", err)
	}
	clients := c.rdb.Nodes()
	only := ""
	if len(clients) == 1 {
		for a := range clients {
			only = a
		}
	}
	syncing := c.syncing()
	rv := &replicaView{slots: make([]int32, clusterSlots), aof: true}
	cv := &clusterView{node: make([]int16, clusterSlots)}
	for i := range cv.node {
		cv.node[i] = -1
	}
	index := map[string]int{}
	for _, r := range slots {
		rng, err := r.ToArray()
		if err != nil || len(rng) < 3 {
			continue
		}
		lo, _ := rng[0].AsInt64()
		hi, _ := rng[1].AsInt64()
		master, err := rng[2].ToArray()
		if err != nil || len(master) < 2 {
			continue
		}
		host, _ := master[0].ToString()
		if host == "" && only != "" {
			// The node that answered does not know its own address: it never met another (a
			// cluster of one node), so it is the one node rueidis knows, by the address
			// rueidis asked it at; rueidis names it so too.
			host, _, _ = net.SplitHostPort(only)
		}
		port, _ := master[1].AsInt64()
		addr := net.JoinHostPort(host, strconv.FormatInt(port, 10))
		i, seen := index[addr]
		if !seen {
			n := &viewNode{addr: addr, client: clients[addr], group: c.batch.nodeGroup(addr)}
			if host == "" || host == "?" {
				n.client = nil // an endpoint rueidis resolves its own way: routed per slot
			}
			if syncing {
				if n.client == nil {
					// Not (yet) known to rueidis: count the replicas CLUSTER SLOTS lists,
					// which errs towards waiting for more.
					n.replicas = int32(len(rng) - 3)
				} else {
					info, err := n.client.Do(ctx, n.client.B().Info().Section("replication").Build().Pin()).ToString()
					if err != nil {
						return fmt.Errorf("lockcore: ask master %s for its replicas: %w", addr, err)
					}
					replid, _ := infoField(info, "master_replid")
					n.replicas = c.repl.expect(addr, replid, int32(infoInt(info, "connected_slaves")), c.now())
					if c.repl.mode == SyncAOF {
						on, err := c.aofOn(ctx, n.client)
						if err != nil {
							return err
						}
						rv.aof = rv.aof && on
					}
				}
			}
			i = len(cv.nodes)
			index[addr] = i
			cv.nodes = append(cv.nodes, n)
		}
		n := cv.nodes[i]
		for s := max(lo, 0); s <= min(hi, clusterSlots-1); s++ {
			rv.slots[s] = n.replicas
			if n.client != nil {
				cv.node[s] = int16(i)
			}
		}
	}
	cv.aof = rv.aof
	for _, n := range cv.nodes {
		if g := n.group; !g.published {
			// A master with replicas in synced mode pays a WAIT behind every batch: its
			// batches leave when a call returns, one in flight, so that each gathers a round
			// trip's operations, where gathering sent about 4 a call on W1's 3 masters.
			// Measured (docs/findings.md): 30,377 against 25,488 acq/s and 32 against 39 us of
			// server CPU per acquisition on a cluster of 3 masters with a replica each; on a
			// cluster without replicas, or on sentinel, where one master takes every batch,
			// gathering does better. Decided once, when the group is first published, so that
			// its operations never see the mode change under them; a group first seen without
			// replicas (sync=auto before they attach) keeps gathering.
			if syncing && n.replicas > 0 {
				g.onReturn = 1
			}
			g.published = true
		}
	}
	if syncing {
		c.repl.view.Store(rv)
	}
	c.batch.view.Store(cv)
	return nil
}

// probeCross asks one master of the view to run nodeBatchScript with one renewal (which
// writes nothing: the probe's field holds no lock) on a key of a slot another master serves,
// and settles batcher.cross: on when the master refuses the key as non-local, off when it
// refuses the script (no shebang or flag support) or runs the operation (it does not check
// keys against its slots, so node batches would not be safe on it). A view of one master
// (every slot local) settles on once the script runs. A user whose ACL does not reach the
// probe's key (a least-privilege user confined to its prefix) gets NOPERM for it instead: the
// server ran the script and checked the command before running it, in the same step
// (scriptCall) that checks its key's slot, so that counts as on too. No answer leaves it
// unknown, for the refresher to probe again.
func (c *Client) probeCross(ctx context.Context) {
	v := c.batch.view.Load()
	if v == nil || c.batch.cross.Load() != crossUnknown {
		return
	}
	var n *viewNode
	for _, x := range v.nodes {
		if x.client != nil {
			n = x
			break
		}
	}
	if n == nil {
		return
	}
	key, foreign := probeKey(v, n)
	var argv batchArgv
	argv.reset(c.publishCmd, "1", true)
	argv.add(key, 'r', "1", c.opt.ID+":probe")
	res := nodeBatchScript.exec(ctx, n.client, nil, argv.argv())
	vals, err := res.ToArray()
	switch {
	case err != nil:
		if _, flagless := refusedWhole(err); flagless {
			c.batch.cross.Store(crossOff)
		}
	case len(vals) != 1:
		c.batch.cross.Store(crossOff)
	case foreign && (misplaced(vals[0]) || deniedByACL(vals[0])):
		c.batch.cross.Store(crossOn)
	case foreign:
		c.batch.cross.Store(crossOff)
	default:
		if r, err := vals[0].AsInt64(); err == nil && r == 0 || deniedByACL(vals[0]) {
			c.batch.cross.Store(crossOn)
		} else {
			c.batch.cross.Store(crossOff)
		}
	}
}

// probeKey returns a key of a slot that a master other than n serves in v, and true; or, when
// n serves every slot, a key of its own and false.
func probeKey(v *clusterView, n *viewNode) (string, bool) {
	own := ""
	for i := 0; i < 1<<16; i++ {
		k := "lockcore:probe:" + strconv.Itoa(i)
		j := v.node[keySlot(k)]
		if j >= 0 && v.nodes[j] != n {
			return k, true
		}
		if own == "" {
			own = k
		}
	}
	return own, false
}

// sendNodeBatch runs b, whose operations span several slots of the master at b.node, as one
// nodeBatchScript call on that master (with one WAIT in synced mode), and answers each
// operation; those the master did not run go again per slot (resendPerSlot).
func (c *Client) sendNodeBatch(ctx context.Context, b *opBatch) {
	v := c.batch.view.Load()
	var n *viewNode
	if v != nil {
		n = v.nodeOf(b.node)
	}
	if n == nil || n.client == nil || c.batch.cross.Load() != crossOn {
		c.batch.stale()
		c.resendPerSlot(ctx, b.ops)
		return
	}
	c.stats.nodeBatches.Add(1)
	b.argv.reset(c.publishCmd, b.ops[0].args[0], true)
	for _, o := range b.ops {
		b.argv.add(o.name, opCodes[o.kind], o.args[0], o.args[1:o.n]...)
	}
	res, unsynced := c.execNode(detach(ctx), v, n, b.argv.argv())
	b.argv.clear()
	vals, err := res.ToArray()
	if f := syncFailed(unsynced); f != nil {
		err, unsynced = f, nil
	}
	if err == nil && len(vals) != len(b.ops) {
		err = errBatchReply
	}
	if err != nil {
		if resend, flagless := refusedWhole(err); resend {
			if flagless {
				c.batch.cross.Store(crossOff)
			}
			c.batch.stale()
			c.resendPerSlot(ctx, b.ops)
			return
		}
		for _, o := range b.ops {
			o.res, o.err = 0, err
		}
		return
	}
	var again []*op
	for i, o := range b.ops {
		if misplaced(vals[i]) {
			again = append(again, o)
			continue
		}
		answerOp(o, vals[i], unsynced)
	}
	if len(again) > 0 {
		c.batch.stale()
		c.resendPerSlot(ctx, again)
	}
}

// execNode runs nodeBatchScript with args on master n of view v, as execScript runs a script:
// in synced mode followed in the same pipeline by the WAIT for n's replicas, on n's own
// connection, never redirected (sendRound, the same send as every synced call on a cluster; a
// call that declares no key gets no MOVED or ASK to follow).
func (c *Client) execNode(ctx context.Context, v *clusterView, n *viewNode, args []string) (rueidis.RedisResult, error) {
	if !c.syncing() {
		return nodeBatchScript.exec(ctx, n.client, nil, args), nil
	}
	dctx, cancel := context.WithTimeout(ctx, c.syncDeadline())
	defer cancel()
	r := &nodeRound{t: syncTarget{addr: n.addr, client: n.client, replicas: int64(n.replicas), aof: v.aof}, idx: []int{0}}
	res := make([]rueidis.RedisResult, 1)
	unsynced := make([]*SyncError, 1)
	c.sendRound(dctx, r, []*script{nodeBatchScript}, []scriptCall{{args: args}}, res, unsynced)
	return c.settleSynced(ctx, dctx, res[0], unsynced[0])
}

// resendPerSlot sends ops, which a node batch did not run, grouped per slot (a script's keys
// must share one): one batchScript call per slot, all in one pipeline. Without synced mode it
// goes through the routed path, where rueidis follows MOVED and ASK for each call. In synced
// mode (execScriptsSynced, execClusterSynced) the calls go to each slot's master in the view,
// one pipeline per node with one WAIT behind that node's calls (it covers every write of the
// connection, so one per slot would wait again for the same writes), and lockcore follows
// MOVED and ASK itself, the WAIT with the script.
func (c *Client) resendPerSlot(ctx context.Context, ops []*op) {
	c.stats.resent.Add(int64(len(ops)))
	at := map[uint16]int{}
	var calls []scriptCall
	var argvs []batchArgv
	var members [][]*op
	for _, o := range ops {
		s := keySlot(o.name)
		j, seen := at[s]
		if !seen {
			j = len(calls)
			at[s] = j
			calls = append(calls, scriptCall{})
			argvs = append(argvs, batchArgv{})
			argvs[j].reset(c.publishCmd, o.args[0], false)
			members = append(members, nil)
		}
		calls[j].keys = append(calls[j].keys, o.name)
		argvs[j].add(o.name, opCodes[o.kind], o.args[0], o.args[1:o.n]...)
		members[j] = append(members[j], o)
	}
	for j := range calls {
		calls[j].args = argvs[j].argv()
	}
	scripts := make([]*script, len(calls))
	for i := range scripts {
		scripts[i] = batchScript
	}
	ctx = detach(ctx)
	dctx := ctx
	if c.syncing() {
		// A pipeline holding WAIT runs on a dedicated connection with no write timeout of
		// rueidis's own: bound it as execScript does.
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, c.syncDeadline())
		defer cancel()
	}
	results, unsynced := c.execScriptsSynced(dctx, scripts, calls)
	// Calls refused TRYAGAIN (see execScript) ran nothing: again, after a pause, until they
	// are answered otherwise or the pauses reach tryAgainFor.
	for pause := tryAgainPause; pause <= tryAgainFor; pause *= 2 {
		var again []int
		for j, res := range results {
			if isTryAgain(res.Error()) {
				again = append(again, j)
			}
		}
		if len(again) == 0 || !sleepCtx(ctx, pause) {
			break
		}
		sub := make([]scriptCall, len(again))
		for i, j := range again {
			sub[i] = calls[j]
		}
		res2, us2 := c.execScriptsSynced(dctx, scripts[:len(again)], sub)
		for i, j := range again {
			results[j], unsynced[j] = res2[i], us2[i]
		}
	}
	for j, res := range results {
		var us error
		if unsynced[j] != nil {
			us = unsynced[j]
		}
		if res.NonRedisError() != nil && dctx.Err() != nil && ctx.Err() == nil {
			res, us = rueidis.NewErrorResult(errNoAnswer), nil
		}
		answerAll(members[j], res, us)
	}
}

// answerAll answers ops from the reply of the batch script call that carried them, in order;
// unsynced is the call's *SyncError when its WAIT fell short, or the call's own failure.
func answerAll(ops []*op, res rueidis.RedisResult, unsynced error) {
	vals, err := res.ToArray()
	if f := syncFailed(unsynced); f != nil {
		err, unsynced = f, nil
	}
	if err == nil && len(vals) != len(ops) {
		err = errBatchReply
	}
	for i, o := range ops {
		if err != nil {
			o.res, o.err = 0, err
			continue
		}
		answerOp(o, vals[i], unsynced)
	}
}

// answerOp answers o from its element v of a batch reply. unsynced is the call's *SyncError
// when its WAIT fell short: one WAIT covered the whole call, so each operation that answered
// carries the shortfall, with its own reply, for its caller to settle.
func answerOp(o *op, v rueidis.RedisMessage, unsynced error) {
	o.res, o.err = v.AsInt64()
	if unsynced != nil && (o.err == nil || rueidis.IsRedisNil(o.err)) {
		se := *unsynced.(*SyncError)
		se.reply = v
		o.res, o.err = 0, &se
	}
}

// misplaced reports whether v, an operation's element of a nodeBatchScript reply, is Redis's
// refusal of its first command because the node does not serve the key (or the cluster is
// down): the operation wrote nothing and must go through the routed path.
func misplaced(v rueidis.RedisMessage) bool {
	re, ok := rueidis.IsRedisErr(v.Error())
	if !ok {
		return false
	}
	s := re.Error()
	return strings.Contains(s, "non local key") || strings.Contains(s, "cluster is down") ||
		strings.Contains(s, "do not hash to the same slot")
}

// deniedByACL reports whether v is an ACL refusal (NOPERM) of a script's command.
func deniedByACL(v rueidis.RedisMessage) bool {
	re, ok := rueidis.IsRedisErr(v.Error())
	return ok && strings.HasPrefix(re.Error(), "NOPERM")
}

// refusedWhole reports whether err, the error of a whole nodeBatchScript call, is a refusal
// Redis answers before a script runs, so that none of its operations ran (resend), and
// whether it is the refusal of the script itself by a server that does not take its shebang
// or flag (flagless). Any other error (no answer; a script error) is the operations' answer.
func refusedWhole(err error) (resend, flagless bool) {
	if isNoScript(err) {
		return false, false
	}
	re, ok := rueidis.IsRedisErr(err)
	if !ok || rueidis.IsRedisNil(err) {
		return false, false
	}
	s := re.Error()
	if strings.Contains(s, "shebang") || strings.Contains(s, "compiling script") {
		return true, true
	}
	code, _, _ := strings.Cut(s, " ")
	switch code {
	case "MOVED", "ASK", "TRYAGAIN", "CROSSSLOT", "CLUSTERDOWN", "READONLY", "OOM", "LOADING",
		"BUSY", "MASTERDOWN", "NOREPLICAS", "MISCONF", "NOPERM":
		return true, false
	}
	return false, false
}
