package lockcore

import (
	"context"
	"time"
)

// await is the waiting half of an acquisition, shared by the lock kinds built after Mutex: a
// first attempt found the lock taken and returned ttl; await joins the local waiters of channel
// and calls try again after each wake-up, or after the TTL the last attempt returned if no
// message came, until try grants (a negative result), wait runs out (negative wait: never), ctx
// ends or the Client is closed. try returns nanoseconds to sleep at most, or 0 or less when it
// has no bound to give (the lock has no TTL, or a fair queue deadline has already passed); the
// waiter then polls every RetryFloor rather than spin.
func (c *Client) await(ctx context.Context, channel string, wait time.Duration, ttl int64, try func() (int64, error)) (bool, error) {
	var deadline time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
	}
	// Close ends a wait as the caller's ctx does: a closed Client cannot take the lock anyway.
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	ended := func() error {
		if err := parent.Err(); err != nil {
			return err
		}
		return ErrClosed
	}

	q := c.waiters.join(channel)
	defer c.waiters.leave(q)
	timer := time.NewTimer(time.Hour) // armed per wait below
	timer.Stop()
	defer timer.Stop()
	subscribed := false
	for {
		sleep := time.Duration(ttl)
		if ttl <= 0 {
			sleep = c.opt.RetryFloor
		}
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
			sleep = min(sleep, left)
		}
		timer.Reset(sleep)
		if !subscribed {
			// Retry only once subscribed, so that a release between the first attempt and the
			// SUBSCRIBE is not missed; the TTL bounds the wait if the subscription fails.
			select {
			case <-q.ready:
				subscribed = true
				timer.Stop()
			case <-timer.C:
			case <-ctx.Done():
				return false, ended()
			}
		} else {
			c.waiters.park(q, timer.C, ctx.Done())
			timer.Stop()
		}
		if ctx.Err() != nil {
			return false, ended()
		}
		var err error
		ttl, err = try()
		if err != nil || ttl < 0 {
			return err == nil, err
		}
	}
}
