package lockcore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// holdGathering makes c's batch group look as if a leader were yielding: operations queue and
// wait, and none leads, until release hands the queue out as takeQueue does after the yield.
func holdGathering(c *Client) (release func()) {
	g := &c.batch.one
	g.mu.Lock()
	g.gathering = true
	g.mu.Unlock()
	return func() { c.takeQueue(g, nil) }
}

// When batches gather (the default), the operations queued while a leader yields go out in calls
// of at most MaxBatch, each sent by its first operation, and every caller gets its own answer: a
// grant, a lock another client holds, an unlock by a non-owner.
func TestGatherDemultiplexesResults(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{MaxBatch: 16})
	other := e.client(t, Options{})
	ctx := ctxT(t, 20*time.Second)
	const n = 24
	release := holdGathering(c)
	d := startDemux(t, e, ctx, c, other, n)
	waitFor(t, func() bool { return c.queued() == n })
	before := c.snapshot()
	release()
	d.check()
	s := c.snapshot()
	if s.Batches-before.Batches != 2 || s.BatchedOps-before.BatchedOps != n {
		t.Errorf("%d batches carrying %d operations; want the %d queued in 2 calls of at most 16", s.Batches-before.Batches, s.BatchedOps-before.BatchedOps, n)
	}
	if c.queued() != 0 {
		t.Errorf("%d operations left in the queue", c.queued())
	}
	d.release()
	e.assertNoKeys(t)
}

// A gathered queue goes out in as few calls of at most MaxBatch as it needs, but in two at least
// once it holds splitAt operations, so that the client works on one call's replies while Redis
// runs the other.
func TestGatherSplitsLongQueues(t *testing.T) {
	e := newEnv(t)
	other := e.client(t, Options{})
	ctx := ctxT(t, 30*time.Second)
	for _, tc := range []struct{ n, calls int }{{splitAt - 1, 1}, {splitAt, 2}, {32, 2}, {70, 3}} {
		c := e.client(t, Options{}) // MaxBatch 32
		release := holdGathering(c)
		d := startDemux(t, e, ctx, c, other, tc.n)
		waitFor(t, func() bool { return c.queued() == tc.n })
		before := c.snapshot()
		release()
		d.check()
		s := c.snapshot()
		if s.Batches-before.Batches != int64(tc.calls) || s.BatchedOps-before.BatchedOps != int64(tc.n) {
			t.Errorf("%d queued: %d calls carrying %d operations; want %d calls", tc.n, s.Batches-before.Batches, s.BatchedOps-before.BatchedOps, tc.calls)
		}
		d.release()
		e.assertNoKeys(t)
	}
}

// A lock attempt whose ctx ends while it waits for the gathering leader leaves the queue at once
// with ctx's error and never reaches Redis; the next operation leads a batch of its own.
func TestGatherQueuedAttemptCanceled(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	ctx := ctxT(t, 20*time.Second)
	release := holdGathering(c)
	cctx, cancel := context.WithCancel(ctx)
	victim := make(chan error, 1)
	go func() { victim <- c.Mutex("victim").Lock(cctx, c.NewOwner()) }()
	waitFor(t, func() bool { return c.queued() == 1 })
	cancel()
	if err := <-victim; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled queued Lock = %v, want context.Canceled", err)
	}
	if q := c.queued(); q != 0 {
		t.Fatalf("%d operations still queued after the cancel", q)
	}
	release()
	if n := e.int(t, "EXISTS", "victim"); n != 0 {
		t.Fatalf("the canceled attempt reached Redis: victim exists")
	}
	o := c.NewOwner()
	if err := c.Mutex("after").Lock(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := c.Mutex("after").Unlock(ctx, o); err != nil {
		t.Fatal(err)
	}
	e.assertNoKeys(t)
}

// Many goroutines at once on a gathering Client: every lock is granted to exactly its caller and
// released, with batches carrying more than one operation, under the race detector.
func TestGatherConcurrentOwners(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	ctx := ctxT(t, 30*time.Second)
	const workers, rounds = 48, 40
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			o := c.NewOwner()
			for r := range rounds {
				m := c.Mutex(fmt.Sprintf("g:%d", (w*rounds+r)%64))
				if err := m.Lock(ctx, o); err != nil {
					errs <- err
					return
				}
				if err := m.Unlock(ctx, o); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if s := c.snapshot(); s.Batches == 0 {
		t.Errorf("no batch of more than one operation in %d concurrent lock/unlock pairs: %+v", workers*rounds, s)
	}
	e.assertNoKeys(t)
}
