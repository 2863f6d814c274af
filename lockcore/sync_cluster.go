package lockcore

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/redis/rueidis"
)

// Synced calls on a cluster: the script and its WAIT on one connection of one node.
//
// WAIT counts the replicas that acknowledged the writes of the connection it runs on, so it
// proves a script's write only when it runs on the connection that ran the script. rueidis's
// cluster client splits a pipeline per slot and follows MOVED and ASK per command: a script sent
// with its WAIT to the master of a stale slot map is redirected and runs on the new master,
// while the WAIT, which declares no key, has already answered on the old one, whose replicas
// then confirm a write they never saw. That grant is lost by the new master's fail-over, and
// was reported synced: the hole synced mode is there to close.
//
// So in synced mode on a cluster no script goes through the routed client. Each call goes to
// the master of its key's slot in the Client's own view (CLUSTER SLOTS, cluster.go), on that
// node's own client (rueidis.Client.Nodes: it follows no redirect), in one pipeline with one
// WAIT for that node's replicas behind the calls of the node; a pipeline holding WAIT, a
// blocking command, runs on one dedicated connection of the node. A call the node answers
// MOVED ran nothing: the view is marked stale (the refresher asks CLUSTER SLOTS again) and the
// call goes again, with a WAIT of its own, to the node the reply names. ASK (the slot is being
// migrated and the key is not on the source) sends ASKING, the script and the WAIT to the ASK
// target in one pipeline on that node's connection. Redirects are followed up to maxRedirects
// times; a call still redirected then returns the redirect, a refusal that ran nothing.
// TRYAGAIN and NOSCRIPT are handled as on the routed path: the callers retry TRYAGAIN with
// pauses (execScript, resendPerSlot), and an EVALSHA answered NOSCRIPT goes again on the same
// node as EVAL, followed by a WAIT of its own.
//
// Without synced mode the routed client is used as before: no WAIT, nothing to split.

// maxRedirects is how many MOVED or ASK replies one synced call follows: one for a stale view,
// one for a migration in progress, and a spare for a slot that moved again meanwhile.
const maxRedirects = 3

// syncTarget is a node a synced call goes to: the node's own client, and how many replicas
// (and whether its AOF, see waitFor) to wait for there.
type syncTarget struct {
	addr     string
	client   rueidis.Client
	replicas int64
	aof      bool
}

// nodeRound is the synced calls that go to one node in one pipeline, after ASKING when asking.
type nodeRound struct {
	t      syncTarget
	asking bool
	idx    []int // indexes of the calls
}

// execClusterSynced runs calls[i] with scripts[i] in synced mode on a cluster, each node's calls
// in one pipeline on one of its connections followed by one WAIT for its replicas, following
// MOVED and ASK itself (see above). It returns each call's result and, per call, a *SyncError
// when the WAIT on the node that ran it fell short (nil otherwise, and for a call that failed).
func (c *Client) execClusterSynced(ctx context.Context, scripts []*script, calls []scriptCall) ([]rueidis.RedisResult, []*SyncError) {
	res := make([]rueidis.RedisResult, len(calls))
	unsynced := make([]*SyncError, len(calls))
	v := c.batch.view.Load()
	var rounds []*nodeRound // one per master: a handful, searched in order
	var unknown []int
	for i, call := range calls {
		var n *viewNode
		if v != nil {
			if j := v.node[keySlot(call.keys[0])]; j >= 0 {
				n = v.nodes[j]
			}
		}
		if n == nil || n.client == nil {
			unknown = append(unknown, i)
			continue
		}
		var r *nodeRound
		for _, x := range rounds {
			if x.t.addr == n.addr {
				r = x
				break
			}
		}
		if r == nil {
			r = &nodeRound{t: syncTarget{addr: n.addr, client: n.client, replicas: int64(n.replicas), aof: v.aof}}
			rounds = append(rounds, r)
		}
		r.idx = append(r.idx, i)
	}
	if len(unknown) > 0 {
		// The view has no client for the slot's master (the slot is unassigned, or its master
		// was not known when the view was made): any node answers, or says where the slot is.
		c.batch.stale()
		if t, err := c.anyTarget(ctx, calls[unknown[0]].keys[0]); err != nil {
			for _, i := range unknown {
				res[i] = rueidis.NewErrorResult(err)
			}
		} else {
			rounds = append(rounds, &nodeRound{t: t, idx: unknown})
		}
	}
	for hop := 0; len(rounds) > 0; hop++ {
		c.sendRounds(ctx, rounds, scripts, calls, res, unsynced)
		if hop == maxRedirects {
			break
		}
		rounds = c.redirected(ctx, rounds, calls, res)
	}
	return res, unsynced
}

// sendRounds sends each round to its node, at the same time when there are several.
func (c *Client) sendRounds(ctx context.Context, rounds []*nodeRound, scripts []*script, calls []scriptCall, res []rueidis.RedisResult, unsynced []*SyncError) {
	if len(rounds) == 1 {
		c.sendRound(ctx, rounds[0], scripts, calls, res, unsynced)
		return
	}
	var wg sync.WaitGroup
	for _, r := range rounds {
		wg.Go(func() { c.sendRound(ctx, r, scripts, calls, res, unsynced) })
	}
	wg.Wait()
}

// sendRound runs the calls of r on r's node as one pipeline on one of its connections: per
// call ASKING (when r.asking) and EVALSHA, then one WAIT; the calls answered NOSCRIPT go again as
// EVAL, with a WAIT of their own. It sets res[i] and unsynced[i] of r's calls.
func (c *Client) sendRound(ctx context.Context, r *nodeRound, scripts []*script, calls []scriptCall, res []rueidis.RedisResult, unsynced []*SyncError) {
	first := c.pipeOnNode(ctx, r, r.idx, scripts, calls, res, false)
	var retry []int
	for _, i := range r.idx {
		if isNoScript(res[i].Error()) {
			retry = append(retry, i)
		}
	}
	var second waitReply
	if len(retry) > 0 {
		// The EVALSHAs ran nothing: their bodies go, with a WAIT whose verdict is theirs, for
		// as many replicas as the node has by now (a fail-over's new master, whose empty script
		// cache answered NOSCRIPT, may have none attached yet: then none is waited for).
		r.t = c.recount(r.t)
		second = c.pipeOnNode(ctx, r, retry, scripts, calls, res, true)
	}
	for _, i := range r.idx {
		unsynced[i] = nil
		w := first
		if slices.Contains(retry, i) {
			w = second
		}
		if !w.ok || !answered(res[i]) {
			// Not waited for, or failed (a redirect included): the caller settles that as
			// without synced mode.
			continue
		}
		if se := c.checkWait(w.res, w.want); se != nil {
			se.reply, _ = res[i].ToMessage()
			unsynced[i] = se
		}
	}
}

// waitReply is the reply of the WAIT that ends a pipeline, and how many replicas it asked for;
// ok is false when the pipeline had no WAIT (the node has no replica to wait for).
type waitReply struct {
	res  rueidis.RedisResult
	want int64
	ok   bool
}

// pipeOnNode sends the calls idx of r as one pipeline on r's node, EVALSHA or, with body, EVAL,
// each after ASKING when r.asking, then the WAIT for the node's replicas if it has any. It sets
// res[i] for each call and returns the WAIT's reply.
func (c *Client) pipeOnNode(ctx context.Context, r *nodeRound, idx []int, scripts []*script, calls []scriptCall, res []rueidis.RedisResult, body bool) waitReply {
	rdb := r.t.client
	step := 1
	if r.asking {
		step = 2
	}
	cmds := make(rueidis.Commands, 0, step*len(idx)+1)
	for _, i := range idx {
		if r.asking {
			cmds = append(cmds, rdb.B().Asking().Build().Pin())
		}
		if body {
			cmds = append(cmds, scripts[i].eval(rdb, calls[i].keys, calls[i].args))
		} else {
			cmds = append(cmds, scripts[i].evalsha(rdb, calls[i].keys, calls[i].args))
		}
	}
	wait, want, ok := c.waitFor(rdb, r.t.replicas, r.t.aof)
	if ok {
		cmds = append(cmds, wait)
	}
	out := rdb.DoMulti(ctx, cmds...)
	for k, i := range idx {
		res[i] = out[k*step+step-1]
	}
	if !ok {
		return waitReply{}
	}
	return waitReply{res: out[len(out)-1], want: want, ok: true}
}

// redirected returns the rounds that send again the calls of rounds answered MOVED or ASK: one
// per target node and kind of redirect. A call whose target cannot be reached gets that error
// as its result.
func (c *Client) redirected(ctx context.Context, rounds []*nodeRound, calls []scriptCall, res []rueidis.RedisResult) []*nodeRound {
	type dest struct {
		addr string
		ask  bool
	}
	var next []*nodeRound
	at := map[dest]*nodeRound{}
	for _, r := range rounds {
		for _, i := range r.idx {
			re, isErr := rueidis.IsRedisErr(res[i].Error())
			if !isErr {
				continue
			}
			var d dest
			if addr, moved := re.IsMoved(); moved {
				d = dest{addr: addr}
				c.batch.stale()
			} else if addr, ask := re.IsAsk(); ask {
				d = dest{addr: addr, ask: true}
			} else {
				continue
			}
			c.stats.redirects.Add(1)
			nr := at[d]
			if nr == nil {
				t, err := c.targetAt(ctx, d.addr, calls[i].keys[0])
				if err != nil {
					res[i] = rueidis.NewErrorResult(err)
					continue
				}
				nr = &nodeRound{t: t, asking: d.ask}
				at[d] = nr
				next = append(next, nr)
			}
			nr.idx = append(nr.idx, i)
		}
	}
	return next
}

// targetAt is the node at addr as a target of synced calls on key: from the view when the view
// knows it as a master, else from the node itself (INFO replication), which a redirect names
// before the view is refreshed, or which serves no slot yet (the first slot migrating to a new
// master).
func (c *Client) targetAt(ctx context.Context, addr, key string) (syncTarget, error) {
	v := c.batch.view.Load()
	aof := false
	if v != nil {
		if n := v.nodeOf(addr); n != nil && n.client != nil {
			return syncTarget{addr: addr, client: n.client, replicas: int64(n.replicas), aof: v.aof}, nil
		}
		aof = v.aof
	}
	node := c.rdb.Nodes()[addr]
	if node == nil {
		// rueidis has not met the node (added to the cluster since its last refresh): a routed
		// read of the key, which writes nothing, follows the same redirect and connects to it.
		_ = c.rdb.Do(ctx, c.rdb.B().Exists().Key(key).Build().Pin())
		if node = c.rdb.Nodes()[addr]; node == nil {
			return syncTarget{}, fmt.Errorf("lockcore: synced call redirected to %s, which the client has no connection to", addr)
		}
	}
	info, err := node.Do(ctx, node.B().Info().Section("replication").Build().Pin()).ToString()
	if err != nil {
		return syncTarget{}, fmt.Errorf("lockcore: ask master %s for its replicas: %w", addr, err)
	}
	if c.repl.mode == SyncAOF {
		if aof, err = c.aofOn(ctx, node); err != nil {
			return syncTarget{}, err
		}
	}
	return syncTarget{addr: addr, client: node, replicas: int64(infoInt(info, "connected_slaves")), aof: aof}, nil
}

// anyTarget is a node to send a call on key to when the view has no client for its slot's
// master: one the view knows, else any rueidis knows. It runs the call if it serves the slot, or
// answers where the slot is.
func (c *Client) anyTarget(ctx context.Context, key string) (syncTarget, error) {
	if v := c.batch.view.Load(); v != nil {
		for _, n := range v.nodes {
			if n.client != nil {
				return syncTarget{addr: n.addr, client: n.client, replicas: int64(n.replicas), aof: v.aof}, nil
			}
		}
	}
	for addr := range c.rdb.Nodes() {
		return c.targetAt(ctx, addr, key)
	}
	return syncTarget{}, fmt.Errorf("lockcore: no cluster node to send a synced call on %q to", key)
}

// recount is t with the replica count the view has for its node now, if it has one.
func (c *Client) recount(t syncTarget) syncTarget {
	if v := c.batch.view.Load(); v != nil {
		if n := v.nodeOf(t.addr); n != nil && n.client != nil {
			t.replicas, t.aof = int64(n.replicas), v.aof
		}
	}
	return t
}
