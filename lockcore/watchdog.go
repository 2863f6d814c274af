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
	ctx, cancel := context.WithTimeout(c.ctx, c.opt.RenewInterval/2)
	defer cancel()
	// One pipelined batch per renewal script: plain locks, and the read-write lock's own renewals
	// when it has holds of them.
	groups := make(map[*script][]int, 1)
	for i, r := range batch {
		s := renewScript
		if r.renewer != nil {
			s = r.renewer.script
		}
		groups[s] = append(groups[s], i)
	}
	for s, idx := range groups {
		calls := make([]scriptCall, len(idx))
		for j, i := range idx {
			r := batch[i]
			keys := []string{r.name}
			if r.renewer != nil {
				keys = r.renewer.keys
			}
			calls[j] = scriptCall{keys: keys, args: []string{r.leaseArg, r.field}}
		}
		for j, res := range s.execMulti(ctx, c.rdb, calls) {
			r := batch[idx[j]]
			n, err := res.AsInt64()
			if err != nil {
				// Transient (network, timeout): mark the lease as not renewed so the next tick retries.
				c.holds.retryRenewal(r.name, r.h)
				continue
			}
			c.renewals.Add(1)
			if n == 0 {
				c.holds.lost(r.name, r.h)
			}
		}
	}
	return batch
}

// now is the clock for lease bookkeeping: monotonic, so wall-clock jumps do not skip renewals.
func (c *Client) now() int64 { return int64(time.Since(c.epoch)) }
