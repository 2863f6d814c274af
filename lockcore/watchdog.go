package lockcore

import (
	"context"
	"time"
)

// watchdog renews the leases of all held locks taken without an explicit lease. It wakes twice
// per RenewInterval and renews, in one pipelined batch, every lock whose lease was last set at
// least 3/4 of an interval ago: so a held lease is renewed about once per RenewInterval (never
// later than 1.5 intervals after it was set, well inside LeaseTime = 3 intervals by default), and
// locks held briefly, the common case under load, are never renewed at all.
func (c *Client) watchdog() {
	defer c.bg.Done()
	tick := time.NewTicker(c.opt.RenewInterval / 2)
	defer tick.Stop()
	var batch []renewal
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		batch = c.renewDue(batch[:0])
	}
}

// renewDue sends one batch of renewals and returns the batch for reuse.
func (c *Client) renewDue(batch []renewal) []renewal {
	now := c.now()
	batch = c.holds.due(batch, now-int64(c.opt.RenewInterval*3/4), now)
	if len(batch) == 0 {
		return batch
	}
	// A renewal that cannot finish within the interval is pointless; the next tick tries again.
	// A synced one gets the whole interval: its WAIT waits for the replicas' acknowledgement
	// (up to SyncTimeout), and a pipeline holding WAIT may first dial a dedicated connection;
	// cut at half an interval under load, renewals of short leases failed until they ran out
	// (TestFamilyOnClusterRWMulti, 300 ms leases, in the full suite under -race). It still
	// ends within the interval, and the next tick (half an interval later) is skipped at most.
	timeout := c.opt.RenewInterval / 2
	if c.syncsOn(batch[0].name) {
		timeout = c.opt.RenewInterval
	}
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	// One pipeline per tick. Plain locks renew by batchScript, one call per batch group (all of
	// them on one server, one per hash slot on a cluster) of up to maxBatch renewals, or one
	// renewScript call each with the NoBatch knob; read-write locks by their own renewal script,
	// one call each.
	var calls []scriptCall
	var scripts []*script
	var owners [][]int // per call, the renewals it carries
	groups := make(map[uint16][]int, 1)
	for i, r := range batch {
		if r.renewer != nil {
			calls = append(calls, scriptCall{keys: r.renewer.keys, args: []string{r.leaseArg, r.field}})
			scripts = append(scripts, r.renewer.script)
			owners = append(owners, []int{i})
			continue
		}
		var slot uint16
		if c.batch.cluster {
			slot = keySlot(r.name)
		}
		groups[slot] = append(groups[slot], i)
	}
	for _, idx := range groups {
		for len(idx) > 0 {
			n := min(len(idx), maxBatch)
			if c.opt.knobs.NoBatch {
				n = 1
			}
			part := idx[:n]
			idx = idx[n:]
			if n == 1 {
				r := batch[part[0]]
				calls = append(calls, scriptCall{keys: []string{r.name}, args: []string{r.leaseArg, r.field}})
				scripts = append(scripts, renewScript)
				owners = append(owners, part)
				continue
			}
			call := scriptCall{keys: make([]string, 0, n)}
			argv := batchArgv{args: make([]string, 0, 3+n), codes: make([]byte, 0, n)}
			argv.reset(c.publishCmd, batch[part[0]].leaseArg, false)
			for _, i := range part {
				r := batch[i]
				call.keys = append(call.keys, r.name)
				argv.add(r.name, 'r', r.leaseArg, r.field)
			}
			call.args = argv.argv()
			calls = append(calls, call)
			scripts = append(scripts, batchScript)
			owners = append(owners, part)
		}
	}
	// In synced mode one WAIT per master (on a cluster, on each node's own connection, see
	// execClusterSynced) follows the renewals in the pipeline; a renewal its replicas did not acknowledge counts as failed (see renewed).
	results, unsynced := c.execScriptsSynced(ctx, scripts, calls)
	for j, res := range results {
		idx := owners[j]
		var notSynced error
		if unsynced[j] != nil {
			notSynced = unsynced[j]
		}
		if scripts[j] != batchScript {
			n, err := res.AsInt64()
			c.renewed(batch[idx[0]], n, err, notSynced)
			continue
		}
		vals, err := res.ToArray()
		if err == nil && len(vals) != len(idx) {
			err = errBatchReply
		}
		for k, i := range idx {
			if err != nil {
				c.renewed(batch[i], 0, err, nil)
				continue
			}
			n, err := vals[k].AsInt64()
			c.renewed(batch[i], n, err, notSynced)
		}
	}
	return batch
}

// renewed settles one renewal's reply: n is 1 when renewed, 0 when the lock is no longer held.
// notSynced is the call's *SyncError, if its replicas did not all acknowledge it: a lease the
// replicas have not seen may be lost with a fail-over, so the renewal counts as failed (the
// confirmed lease stays where it was and the next tick tries again), as an unanswered one does.
func (c *Client) renewed(r renewal, n int64, err, notSynced error) {
	if err == nil && n == 1 && notSynced != nil {
		err = notSynced
	}
	if err != nil {
		// Transient (network, timeout): mark the lease as not renewed so the next tick retries.
		c.stats.renewFailed.Add(1)
		c.holds.retryRenewal(r.name, r.h)
		return
	}
	c.renewals.Add(1)
	if n == 0 {
		c.stats.renewGone.Add(1)
		c.holds.lost(r.name, r.h)
		return
	}
	c.holds.renewedAt(r)
}

// now is the clock for lease bookkeeping: monotonic, so wall-clock jumps do not skip renewals.
func (c *Client) now() int64 { return int64(time.Since(c.epoch)) }
