package lockcore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrShortLease is returned, wrapped, for an explicit lease under 1 ms. Redis keeps leases in
// whole milliseconds (PX, PEXPIRE): such a lease would reach Redis as 0, which the scripts
// cannot set (a read lock's script used to fail after writing its hold, leaving the lock held
// with no TTL), and no grant could be used within it anyway.
var ErrShortLease = errors.New("lockcore: lease under 1ms")

// checkLease refuses an explicit lease under 1 ms; 0 (the watchdog's lease) and longer leases
// pass. Every lock kind calls it before it sends anything.
func checkLease(lease time.Duration) error {
	if lease > 0 && lease < time.Millisecond {
		return fmt.Errorf("%w: %v (Redis keeps leases in whole milliseconds)", ErrShortLease, lease)
	}
	return nil
}

// ceilMs rounds d up to a whole millisecond, the unit Redis keeps leases in, so that Redis never
// holds a lock for less than it was asked and the hold table records what Redis was sent.
func ceilMs(d time.Duration) time.Duration {
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}

// leaseArgs is how one acquisition is leased: what its script sends and what the hold table
// records with the grant.
type leaseArgs struct {
	arg      string        // the lease in ms, as the scripts take it
	d        time.Duration // the lease
	watchdog bool          // renewed by the watchdog until released
}

// begin makes the checks every lock kind makes before it sends an attempt, and resolves the
// lease: 0 means the Client's LeaseTime renewed by the watchdog, a positive lease (1 ms or more,
// see checkLease) is rounded up to a whole millisecond and not renewed.
func (c *Client) begin(ctx context.Context, owner Owner, lease time.Duration) (leaseArgs, error) {
	if owner.IsZero() {
		return leaseArgs{}, ErrNoOwner
	}
	if c.closed.Load() {
		return leaseArgs{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return leaseArgs{}, err
	}
	if err := checkLease(lease); err != nil {
		return leaseArgs{}, err
	}
	if lease > 0 {
		lease = ceilMs(lease)
		return leaseArgs{arg: msArg(lease), d: lease}, nil
	}
	return leaseArgs{arg: c.leaseArg, d: c.opt.LeaseTime, watchdog: true}, nil
}
