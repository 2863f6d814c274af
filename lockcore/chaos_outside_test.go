package lockcore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/netem"
	"github.com/redis/rueidis"
)

// TestChaos's loads for issue 43's findings 2, 3 and 4, each beside the workers (chaosExtras):
// sub-millisecond and zero leases on every kind, an operation whose script errors batched with
// other operations, and a Redisson-like waiter behind a 5–20 ms proxy on a lock one Client keeps
// hot. Their own invariant (reported with t.Errorf, as "invariant 6"): every outside waiter is
// granted within chaosOutsideCeiling (or twice the stated bound, outsideBound, if longer)
// whenever the hot Client had no fault around its wait, and a grant is never hidden by another
// operation's error. TestSubscribedNeighbourBound holds the waiter to the stated bound itself.
func init() {
	chaosExtras = append(chaosExtras, chaosShortLeases, chaosBatchError, chaosOutsideWaiter)
}

// chaosShortLeaseChoices are the leases chaosShortLeases asks for: under 1 ms (refused with
// ErrShortLease, nothing sent), 1 to 3 ms (legal; a grant may come back too late to count), and
// 0 (the Client's lease, renewed).
var chaosShortLeaseChoices = []time.Duration{time.Microsecond, 500 * time.Microsecond, 999 * time.Microsecond,
	time.Millisecond, 1500 * time.Microsecond, 3 * time.Millisecond, 0}

// chaosShortLeases is one more worker on a client drawn from the seed, on the shared names,
// whose leases are drawn from chaosShortLeaseChoices. A refused lease must be refused, never
// granted; the others go through the checker as any worker's (invariants 1 to 5).
func chaosShortLeases(r *chaosRun) {
	rng := chaosRNG(r.cfg.seed, 5000)
	cc := r.clients[rng.IntN(len(r.clients))]
	c := cc.c
	owner := c.NewOwner()
	const worker = 90
	r.workers.Store(owner.Field(), fmt.Sprintf("c%d.w%d(short leases)", cc.i, worker))
	kinds := []chaosKind{kindMutex, kindMutexTry, kindFenced, kindFair, kindRWWrite, kindRWRead}
	for time.Now().Before(r.end) {
		kind := kinds[rng.IntN(len(kinds))]
		name := chaosMutexNames[rng.IntN(len(chaosMutexNames))]
		lease := chaosShortLeaseChoices[rng.IntN(len(chaosShortLeaseChoices))]
		if lease > 0 && lease < time.Millisecond {
			ok, err := chaosTryKind(c, owner, kind, name, lease)
			if ok || !errors.Is(err, ErrShortLease) {
				r.t.Errorf("invariant 6: c%d %v %s with lease %v: granted %v, %v; want ErrShortLease", cc.i, kind, name, lease, ok, err)
				if ok {
					chaosUnlockKind(c, owner, kind, name)
				}
			}
		} else {
			op := &chaosOp{client: cc.i, worker: worker, owner: owner.Field(), kind: kind, name: name, lease: lease,
				leaseL: lease, wait: time.Duration(rng.IntN(50)) * time.Millisecond, timeout: 500 * time.Millisecond,
				hold: time.Duration(rng.IntN(2000)) * time.Microsecond}
			if lease == 0 {
				op.leaseL = cc.opt.LeaseTime
			}
			r.do(c, owner, op)
		}
		time.Sleep(time.Duration(20+rng.IntN(80)) * time.Millisecond)
	}
}

// chaosTryKind makes one attempt (wait 0) at name with kind.
func chaosTryKind(c *Client, owner Owner, kind chaosKind, name string, lease time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	switch kind {
	case kindFenced:
		_, ok, err := c.FencedMutex(name).TryLock(ctx, owner, 0, lease)
		return ok, err
	case kindFair:
		return c.FairMutex(name, FairMutexOptions{}).TryLock(ctx, owner, 0, lease)
	case kindRWWrite:
		return c.RWMutex(name).TryLock(ctx, owner, 0, lease)
	case kindRWRead:
		return c.RWMutex(name).TryRLock(ctx, owner, 0, lease)
	}
	return c.Mutex(name).TryLock(ctx, owner, 0, lease)
}

// chaosUnlockKind releases what chaosTryKind took.
func chaosUnlockKind(c *Client, owner Owner, kind chaosKind, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	switch kind {
	case kindFenced:
		c.FencedMutex(name).Unlock(ctx, owner)
	case kindFair:
		c.FairMutex(name, FairMutexOptions{}).Unlock(ctx, owner)
	case kindRWWrite:
		c.RWMutex(name).Unlock(ctx, owner)
	case kindRWRead:
		c.RWMutex(name).RUnlock(ctx, owner)
	default:
		c.Mutex(name).Unlock(ctx, owner)
	}
}

// chaosBatchError, on a client that batches: one owner keeps trying a lock whose hash holds a
// malformed count under its own field (its attempt is a re-entry whose HINCRBY errors), while a
// second owner of the same client tries a free lock at the same moment, so that both often go
// out in one batch script call. The second attempt's reply must be its own: when it reports an
// error reply and no grant, Redis must not hold its field (a grant hidden by the other
// operation's error, which nobody would release until its lease ran out).
func chaosBatchError(r *chaosRun) {
	var cc *chaosClient
	for _, x := range r.clients {
		if !x.opt.knobs.NoBatch {
			cc = x
			break
		}
	}
	if cc == nil {
		return
	}
	c := cc.c
	bad, good := c.NewOwner(), c.NewOwner()
	r.workers.Store(bad.Field(), fmt.Sprintf("c%d.w91(malformed count)", cc.i))
	r.workers.Store(good.Field(), fmt.Sprintf("c%d.w92(beside it)", cc.i))
	// A fresh name for every paired attempt, so that a field left by an earlier grant whose
	// release failed (an OOM episode refuses HINCRBY) is never taken for a hidden one.
	const badName = "chaos:bad"
	ctx := context.Background()
	seed := func() {
		r.direct.Do(ctx, r.direct.B().Hset().Key(badName).FieldValue().FieldValue(bad.Field(), "not-a-count").Build())
	}
	seed()
	rng := chaosRNG(r.cfg.seed, 5001)
	var tries, hidden int
	for time.Now().Before(r.end.Add(-time.Second)) {
		goodName := fmt.Sprintf("chaos:good:%d", tries)
		var wg sync.WaitGroup
		var badOK bool
		wg.Go(func() {
			actx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			badOK, _ = c.Mutex(badName).TryLock(actx, bad, 0, 0)
		})
		actx, cancel := context.WithTimeout(ctx, time.Second)
		ok, err := c.Mutex(goodName).TryLock(actx, good, 0, 2*time.Second)
		cancel()
		wg.Wait()
		tries++
		var re *rueidis.RedisError
		if !ok && errors.As(err, &re) && !re.IsNil() {
			// An error reply: the attempt did not run, or ran and was hidden.
			n, _ := r.direct.Do(ctx, r.direct.B().Hexists().Key(goodName).Field(c.fieldOf(goodName, good)).Build()).AsInt64()
			if n == 1 {
				hidden++
				r.t.Errorf("invariant 6: c%d's attempt on the fresh %s got the error reply %v, yet Redis holds its field (a grant hidden by another operation of its batch)", cc.i, goodName, err)
			}
		}
		uctx, ucancel := context.WithTimeout(ctx, 2*time.Second)
		if ok {
			c.Mutex(goodName).Unlock(uctx, good)
		}
		if badOK {
			// The resolver cleared the malformed field after a lost reply, and the next
			// attempt took the lock for real: release it and plant the count again.
			c.Mutex(badName).Unlock(uctx, bad)
			seed()
		}
		ucancel()
		time.Sleep(time.Duration(20+rng.IntN(40)) * time.Millisecond)
	}
	r.direct.Do(ctx, r.direct.B().Del().Key(badName).Build())
	r.t.Logf("chaos: c%d batch-error load: %d paired attempts, %d hidden grants, %d batches", cc.i, tries, hidden, c.snapshot().Batches)
}

// chaosOutsideWaiter keeps chaos:hot busy with two goroutines of a client drawn from the seed
// (holding 300 µs each, through the checker), while a Redisson-protocol waiter behind its own
// proxy at 5–20 ms round trip takes it now and then (through the checker too). When the hot
// client had no fault from a lease before the wait to its end, the wait must stay within the
// stated bound, taken as TestSubscribedNeighbourBound takes it on a loaded machine.
func chaosOutsideWaiter(r *chaosRun) {
	rng := chaosRNG(r.cfg.seed, 5002)
	cc := r.clients[rng.IntN(len(r.clients))]
	c := cc.c
	const name = "chaos:hot"
	const hold = 300 * time.Microsecond
	rtt := time.Duration(5+rng.IntN(16)) * time.Millisecond
	stop := r.end.Add(-time.Second)
	var wg sync.WaitGroup
	for g := range 2 {
		owner := c.NewOwner()
		r.workers.Store(owner.Field(), fmt.Sprintf("c%d.w%d(hot)", cc.i, 93+g))
		wg.Go(func() {
			for time.Now().Before(stop) {
				r.do(c, owner, &chaosOp{client: cc.i, worker: 93 + g, owner: owner.Field(), kind: kindMutex, name: name,
					leaseL: cc.opt.LeaseTime, wait: -1, timeout: time.Second, hold: hold})
			}
		})
	}
	defer wg.Wait()

	n := netem.New(netem.Conditions{Latency: rtt / 2})
	defer n.Close()
	dial := func(ctx context.Context, addr string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
		return n.Dial(ctx, "tcp", addr)
	}
	const lease = 2 * time.Second
	nb := &neighbour{name: name, field: "redisson-neighbour:chaos", lease: msArg(lease)}
	r.workers.Store(nb.field, "outside waiter")
	for _, p := range []*rueidis.Client{&nb.rdb, &nb.sub} {
		rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{r.addr}, ForceSingleClient: true, DisableCache: true, DialCtxFn: dial})
		if err != nil {
			r.t.Errorf("outside waiter: %v", err)
			return
		}
		defer rc.Close()
		*p = rc
	}
	// stated is the bound TestSubscribedNeighbourBound holds the waiter to, at the round trip a
	// loaded machine gives it (2R + 2 ms), doubled. Here the wait is held to a ceiling instead:
	// under -race the run's other clients, faults and OOM episodes load the same two cores, and
	// two CI-length runs at once (as CI runs lockcore beside the other packages) saw waits of
	// 845-893 ms at 5-13 ms round trips, against stated bounds of 123-257 ms; what this
	// invariant is for, a waiter starved by the hot Client's local queue, was never granted at all
	// (0 grants in 3 rounds of 5 s at 6 ms before issue 43's fix). The stated bound is in the log.
	loaded := 2*rtt + 2*time.Millisecond
	stated := 2*outsideBound(loaded, hold, c.opt.HandoffWindow, c.opt.HandoffYield) + 4*rtt
	bound := max(chaosOutsideCeiling, 2*stated)
	var waits, checked int
	var worst time.Duration
	for time.Now().Before(stop.Add(-time.Second)) {
		time.Sleep(time.Duration(100+rng.IntN(200)) * time.Millisecond)
		epoch, calm, ooms := cc.epoch.Load(), cc.faulted.Load() == 0, chaosOOMCount(r)
		op := &chaosOp{client: -1, owner: nb.field, kind: kindMutex, name: name, lease: lease, leaseL: lease, wait: -1, timeout: 10 * time.Second}
		ctx, cancel := context.WithTimeout(context.Background(), op.timeout)
		begin := time.Now()
		op.start = begin.Sub(r.t0)
		op.winEnd = op.start + lease/2
		_, err := nb.lock(ctx)
		cancel()
		waited := time.Since(begin)
		op.ret = r.since()
		// Calm: no fault of the hot client began during the wait, none was on at either end,
		// the last heal was a call bound before the wait began (the calls it held up have
		// returned), and the server refused no write for OOM meanwhile (an OOM episode of
		// another load refuses the hot client's releases).
		calm = calm && cc.epoch.Load() == epoch && cc.faulted.Load() == 0 &&
			time.Duration(cc.lastHeal.Load()) < op.start-chaosCallBound && chaosOOMCount(r) == ooms
		if err != nil {
			if calm {
				r.t.Errorf("invariant 6: the outside waiter (%v round trip) was not granted %s in %v with the hot client c%d calm: %v; stated bound %v",
					rtt, name, waited, cc.i, err, bound)
			}
			continue
		}
		waits++
		if calm {
			checked++
			worst = max(worst, waited)
			if waited > bound {
				r.t.Errorf("invariant 6: the outside waiter (%v round trip) waited %v for %s, the hot client c%d calm; stated bound %v",
					rtt, waited, name, cc.i, bound)
			}
		}
		if r.chk.enter(op) {
			time.Sleep(hold)
			r.chk.leave(op)
		}
		// An OOM episode refuses the release's HINCRBY: try again, as long as the lease.
		uctx, ucancel := context.WithTimeout(context.Background(), lease)
		for err := nb.unlock(uctx); err != nil; err = nb.unlock(uctx) {
			if uctx.Err() != nil {
				r.t.Errorf("outside waiter: unlock: %v", err)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		ucancel()
	}
	r.t.Logf("chaos: outside waiter at %v round trip on c%d's hot lock: %d grants, %d with the client calm, worst %v (stated bound %v, checked against %v)",
		rtt, cc.i, waits, checked, worst, stated, bound)
}

// chaosOutsideCeiling is the longest a calm outside waiter may wait in TestChaos (invariant 6).
const chaosOutsideCeiling = 2 * time.Second

// chaosOOMCount is how many commands the server has refused for OOM (INFO errorstats), -1 if it
// cannot tell.
func chaosOOMCount(r *chaosRun) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := r.direct.Do(ctx, r.direct.B().Info().Section("errorstats").Build()).ToString()
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "errorstat_OOM:count="); ok {
			n, _ := strconv.ParseInt(rest, 10, 64)
			return n
		}
	}
	return 0
}
