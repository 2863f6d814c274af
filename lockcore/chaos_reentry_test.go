package lockcore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// TestChaos's loads for issue 43's findings 1 and 5 (see chaosExtras):
//   - nested holds: one more worker per Client takes a lock twice and releases the inner hold
//     while still inside its window, under the run's faults (lost, held and delayed replies)
//     and under OOM; the outer hold must stay exclusive whatever the inner release met;
//   - OOM: every few seconds the server refuses writes (maxmemory 1) for a moment, so that
//     releases, renewals and grants get error replies;
//   - Close during hand-overs: every few seconds a Client of its own is made, its goroutines hand
//     a Mutex to each other, and it is closed under them; no Lock may report a grant once Close
//     has returned (the docs promise ErrClosed; nothing renews such a hold).
func init() {
	chaosExtras = append(chaosExtras, chaosNestedHolds, chaosOOM, chaosCloseDuringHandoffs)
}

// chaosNestedWorker is the worker index of a Client's nested-holds worker in reports.
const chaosNestedWorker = 100

// chaosNestedHolds runs one nested-holds worker per Client until the end of the run.
func chaosNestedHolds(r *chaosRun) {
	var wg sync.WaitGroup
	for _, cc := range r.clients {
		wg.Go(func() {
			owner := cc.c.NewOwner()
			r.workers.Store(owner.Field(), fmt.Sprintf("c%d.w%d", cc.i, chaosNestedWorker))
			rng := chaosRNG(r.cfg.seed, 5000+uint64(cc.i))
			for time.Now().Before(r.end) {
				r.nested(rng, cc, owner)
			}
		})
	}
	wg.Wait()
}

// nested runs one nested-holds operation: take the lock twice, enter, release the inner hold
// inside the window, stay inside, leave, release the outer hold.
func (r *chaosRun) nested(rng *rand.Rand, cc *chaosClient, owner Owner) {
	kinds := []chaosKind{kindMutexReentrant, kindFair, kindRWWrite, kindRWRead}
	op := &chaosOp{client: cc.i, worker: chaosNestedWorker, owner: owner.Field(), wait: -1,
		kind: kinds[rng.IntN(len(kinds))], name: chaosMutexNames[rng.IntN(len(chaosMutexNames))]}
	if rng.IntN(2) == 0 {
		op.lease = time.Duration(300+rng.IntN(1701)) * time.Millisecond
	}
	op.leaseL = op.lease
	if op.lease == 0 {
		op.leaseL = cc.opt.LeaseTime
	}
	op.timeout = time.Duration(200+rng.IntN(801)) * time.Millisecond
	op.hold = time.Duration(rng.Int64N(int64(op.leaseL) * 2 / 5))
	c := cc.c
	var acquire func(ctx context.Context) (bool, int64, error)
	var release func(ctx context.Context) error
	switch op.kind {
	case kindMutexReentrant:
		m := c.Mutex(op.name)
		acquire = func(ctx context.Context) (bool, int64, error) {
			if op.lease > 0 {
				return true, 0, m.LockLease(ctx, owner, op.lease)
			}
			return true, 0, m.Lock(ctx, owner)
		}
		release = func(ctx context.Context) error { return m.Unlock(ctx, owner) }
	case kindFair:
		f := c.FairMutex(op.name, FairMutexOptions{})
		acquire = func(ctx context.Context) (bool, int64, error) {
			if op.lease > 0 {
				return true, 0, f.LockLease(ctx, owner, op.lease)
			}
			return true, 0, f.Lock(ctx, owner)
		}
		release = func(ctx context.Context) error { return f.Unlock(ctx, owner) }
	case kindRWWrite:
		rw := c.RWMutex(op.name)
		acquire = func(ctx context.Context) (bool, int64, error) {
			if op.lease > 0 {
				return true, 0, rw.LockLease(ctx, owner, op.lease)
			}
			return true, 0, rw.Lock(ctx, owner)
		}
		release = func(ctx context.Context) error { return rw.Unlock(ctx, owner) }
	case kindRWRead:
		rw := c.RWMutex(op.name)
		acquire = func(ctx context.Context) (bool, int64, error) {
			if op.lease > 0 {
				return true, 0, rw.RLockLease(ctx, owner, op.lease)
			}
			return true, 0, rw.RLock(ctx, owner)
		}
		release = func(ctx context.Context) error { return rw.RUnlock(ctx, owner) }
	}
	if ok, _, err := r.call(op, acquire, true); !ok || err != nil {
		return
	}
	holds := 1
	again := *op
	if ok, _, err := r.call(&again, acquire, false); ok && err == nil {
		holds++
	}
	unlock := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		err := release(ctx)
		cancel()
		r.chk.released(op, time.Since(start), err)
		holds--
	}
	if !r.chk.enter(op) {
		for holds > 0 {
			unlock()
		}
		return
	}
	stay := func(d time.Duration) {
		if d = min(d, op.winEnd-r.since()-time.Millisecond); d > 0 {
			time.Sleep(d)
		}
	}
	stay(op.hold / 3)
	if holds == 2 {
		// The inner release, from inside: whatever it meets (no reply, an error reply), the
		// outer hold stays the owner's until the window ends.
		unlock()
	}
	stay(op.hold - op.hold/3)
	r.chk.leave(op)
	for holds > 0 {
		unlock()
	}
}

// chaosOOM refuses the server's writes (maxmemory 1) for 20–300 ms every 2–8 s, through the
// run's direct connection, and lifts the limit for good before the end of the run.
func chaosOOM(r *chaosRun) {
	rng := chaosRNG(r.cfg.seed, 6000)
	set := func(v string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return r.direct.Do(ctx, r.direct.B().Arbitrary("CONFIG", "SET").Args("maxmemory", v).Build()).Error()
	}
	stop := r.end.Add(-500 * time.Millisecond)
	episodes := 0
	for {
		at := time.Now().Add(time.Duration(2000+rng.IntN(6001)) * time.Millisecond)
		dur := time.Duration(20+rng.IntN(281)) * time.Millisecond
		if !sleepUntil(at, stop) || at.Add(dur).After(stop) {
			break
		}
		if err := set("1"); err != nil {
			r.t.Errorf("chaos OOM: %v", err)
			return
		}
		// The episode is on: a write is refused (the key is never made).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := r.direct.Do(ctx, r.direct.B().Set().Key("chaos:oomprobe").Value("1").Px(time.Second).Build()).Error()
		cancel()
		if _, refused := rueidis.IsRedisErr(err); !refused || err == nil {
			r.t.Errorf("chaos OOM: a write under maxmemory 1 was not refused: %v", err)
		}
		time.Sleep(dur)
		// The limit is lifted even if the test is failing: leftovers must be able to go.
		for err := set("0"); err != nil; err = set("0") {
			r.t.Logf("chaos OOM: lifting the limit: %v", err)
			time.Sleep(100 * time.Millisecond)
		}
		episodes++
	}
	r.t.Logf("chaos OOM: %d episodes of maxmemory 1", episodes)
}

// chaosCloseDuringHandoffs makes a Client every 2–6 s whose goroutines take one name's Mutex
// from each other (the local queue's hand-overs), and closes it under them after 100–600 ms. A
// Lock of that Client that reports a grant after its Close returned is a violation: nothing
// renews that hold (the docs promise ErrClosed).
func chaosCloseDuringHandoffs(r *chaosRun) {
	rng := chaosRNG(r.cfg.seed, 7000)
	stop := r.end.Add(-time.Second)
	for round := 0; ; round++ {
		if !sleepUntil(time.Now().Add(time.Duration(2000+rng.IntN(4001))*time.Millisecond), stop) {
			return
		}
		lease := time.Duration(600+rng.IntN(1401)) * time.Millisecond
		c, err := New(Options{LeaseTime: lease, Redis: rueidis.ClientOption{InitAddress: []string{r.addr}, ForceSingleClient: true}})
		if err != nil {
			r.t.Errorf("chaos close: round %d: %v", round, err)
			return
		}
		ci := 90 + round%10
		name := chaosMutexNames[rng.IntN(len(chaosMutexNames))]
		var closeDone time.Duration
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := range 3 {
			wrng := chaosRNG(r.cfg.seed, 7100+uint64(round)*10+uint64(w))
			wg.Go(func() {
				owner := c.NewOwner()
				r.workers.Store(owner.Field(), fmt.Sprintf("c%d.w%d", ci, w))
				m := c.Mutex(name)
				for {
					op := &chaosOp{client: ci, worker: w, owner: owner.Field(), kind: kindMutex, name: name, wait: -1, leaseL: lease,
						timeout: time.Duration(200+wrng.IntN(801)) * time.Millisecond, hold: time.Duration(wrng.IntN(5001)) * time.Microsecond}
					ok, _, err := r.call(op, func(ctx context.Context) (bool, int64, error) { return true, 0, m.Lock(ctx, owner) }, true)
					if errors.Is(err, ErrClosed) {
						return
					}
					if !ok || err != nil {
						continue
					}
					mu.Lock()
					closed := closeDone
					mu.Unlock()
					if closed > 0 && op.ret > closed+100*time.Millisecond {
						r.t.Errorf("chaos close: Lock reported a grant %v after its Client's Close returned (at +%v): %v",
							op.ret-closed, closed.Round(time.Millisecond), op)
					}
					if r.chk.enter(op) {
						if d := min(op.hold, op.winEnd-r.since()-time.Millisecond); d > 0 {
							time.Sleep(d)
						}
						r.chk.leave(op)
					}
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					start := time.Now()
					err = m.Unlock(ctx, owner)
					cancel()
					r.chk.released(op, time.Since(start), err)
				}
			})
		}
		time.Sleep(time.Duration(100+rng.IntN(501)) * time.Millisecond)
		c.Close()
		mu.Lock()
		closeDone = r.since()
		mu.Unlock()
		wg.Wait()
	}
}
