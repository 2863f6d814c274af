package extdriver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// fairWaiters is how many owners the fair rule queues behind a holder, and fairGap how long it
// leaves between their acquires, so that each is surely waiting in the adapter (and, for a
// library over Redis, queued there) before the next is sent: a wide margin over a request's
// round trip through the pipe and to Redis, so that the order sent is the order of arrival.
const (
	fairWaiters = 4
	fairGap     = 100 * time.Millisecond
)

// fair: with owner "a" holding the lock, owners q1…q4 send acquires one after another, fairGap
// apart; then a releases. A fair lock grants them in that order. Each releases as soon as it is
// granted, so that the next can be: the order the grants come in is the order the lock gave.
func (c *checker) fair(ctx context.Context, a *Adapter) *Failure {
	name := c.lock("fair", 0)
	if f := c.acquire(ctx, a, "a", name, -1, StatusOK); f != nil {
		return f
	}
	type done struct {
		owner string
		ok    bool
		err   error
	}
	var mu sync.Mutex
	var order []string // the owners as they were granted
	dones := make(chan done, fairWaiters)
	for i := range fairWaiters {
		owner := "q" + strconv.Itoa(i+1)
		go func() {
			ok, err := a.Acquire(ctx, owner, name, checkLate)
			if ok && err == nil {
				mu.Lock()
				order = append(order, owner)
				mu.Unlock()
				// Released after the grant is noted: the next grant cannot be noted first.
				if rerr := a.Release(owner, name); rerr != nil {
					err = fmt.Errorf("release: %w", rerr)
				}
			}
			dones <- done{owner: owner, ok: ok, err: err}
		}()
		select {
		case <-time.After(fairGap):
		case <-ctx.Done():
		}
	}
	relErr := a.Release("a", name)
	var f *Failure
	for range fairWaiters {
		d := <-dones
		switch {
		case f != nil:
		case d.err != nil:
			f = &Failure{Op: op(OpAcquire, d.owner, name, checkLate), Detail: d.err.Error()}
		case !d.ok:
			f = &Failure{Op: op(OpAcquire, d.owner, name, checkLate), Detail: fmt.Sprintf("answered timeout, want ok within %v of a's release", checkLate)}
		}
	}
	switch {
	case relErr != nil:
		return &Failure{Op: op(OpRelease, "a", name, noWait), Detail: relErr.Error()}
	case f != nil:
		return f
	}
	want := make([]string, fairWaiters)
	for i := range want {
		want[i] = "q" + strconv.Itoa(i+1)
	}
	if got := strings.Join(order, " "); got != strings.Join(want, " ") {
		return &Failure{Op: fmt.Sprintf("%s with %s queued %v apart", op(OpRelease, "a", name, noWait), strings.Join(want, ", "), fairGap),
			Detail: "granted in the order " + got + ", want the order they queued in, " + strings.Join(want, " ")}
	}
	return nil
}
