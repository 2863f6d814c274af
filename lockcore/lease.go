package lockcore

import (
	"context"
	"time"
)

// leaseArgs is how one acquisition is leased: what its script sends and what the hold table
// records with the grant.
type leaseArgs struct {
	arg      string        // the lease in ms, as the scripts take it
	d        time.Duration // the lease
	watchdog bool          // renewed by the watchdog until released
}

// begin makes the checks every lock kind makes before it sends an attempt, and resolves the
// lease: 0 means the Client's LeaseTime renewed by the watchdog, a positive lease is used as is
// and not renewed.
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
	if lease > 0 {
		return leaseArgs{arg: msArg(lease), d: lease}, nil
	}
	return leaseArgs{arg: c.leaseArg, d: c.opt.LeaseTime, watchdog: true}, nil
}
