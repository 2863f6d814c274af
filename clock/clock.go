// Package clock estimates how far this process's clock is from a Redis server's (TIME), so that
// generator processes on machines whose clocks disagree can start together by the deployment's
// own clock: NTP keeps machines within milliseconds at best, a lock's hold time is shorter, and
// one server's clock is the same for every process that asks it.
//
// The estimate is Cristian's: TIME is sent several times, one at a time; the sample with the
// smallest round trip is kept, and the server's time is taken to be its reply at the midpoint of
// that round trip. The error of the offset is then at most half that round trip.
package clock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// DefaultSamples is how many TIME round trips Measure makes: enough that one of them is not
// delayed by a busy server or network, few enough to cost nothing against a run.
const DefaultSamples = 7

// ErrNoTime is wrapped by Measure's errors when the server would not answer TIME (an ACL user
// without it, a proxy that refuses it).
var ErrNoTime = errors.New("clock: the server's TIME could not be read")

// Options tune Measure. The zero value is DefaultSamples and this process's clock.
type Options struct {
	// Samples is how many TIME round trips to make (DefaultSamples if 0).
	Samples int
	// Now reads the local clock (time.Now if nil). Tests set it to a skewed clock, as another
	// machine's would be.
	Now func() time.Time
}

// Estimate is this process's view of a server's clock. It is a plain value, safe for concurrent
// use.
type Estimate struct {
	// Offset is the server's clock minus the local clock (Options.Now), as estimated.
	Offset time.Duration
	// RTT is the round trip of the sample the estimate came from: the offset is right to within
	// half of it.
	RTT time.Duration
	// Samples is how many round trips were made.
	Samples int
	// localAhead is how far Options.Now ran ahead of time.Now when measured (0 but in tests), so
	// that readings of time.Now convert to the server's clock too.
	localAhead time.Duration
}

// Measure estimates the offset of c's server's clock from the local one, from opt.Samples TIME
// round trips (see the package comment). c must talk to one server.
func Measure(ctx context.Context, c rueidis.Client, opt Options) (Estimate, error) {
	n := opt.Samples
	if n <= 0 {
		n = DefaultSamples
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	best := Estimate{RTT: -1, Samples: n}
	for range n {
		sent := now()
		reply, err := c.Do(ctx, c.B().Time().Build()).AsStrSlice()
		recv := now()
		if err != nil {
			return Estimate{}, fmt.Errorf("%w: %w", ErrNoTime, err)
		}
		server, err := parseTime(reply)
		if err != nil {
			return Estimate{}, err
		}
		rtt := recv.Sub(sent)
		if best.RTT < 0 || rtt < best.RTT {
			mid := sent.Add(rtt / 2)
			best.RTT, best.Offset = rtt, server.Sub(mid)
		}
	}
	best.localAhead = time.Until(now())
	return best, nil
}

// parseTime reads TIME's reply: Unix seconds and microseconds, as two strings.
func parseTime(reply []string) (time.Time, error) {
	if len(reply) != 2 {
		return time.Time{}, fmt.Errorf("%w: reply %q: want seconds and microseconds", ErrNoTime, reply)
	}
	sec, err1 := strconv.ParseInt(reply[0], 10, 64)
	usec, err2 := strconv.ParseInt(reply[1], 10, 64)
	if err1 != nil || err2 != nil || usec < 0 || usec >= 1e6 {
		return time.Time{}, fmt.Errorf("%w: reply %q: want seconds and microseconds", ErrNoTime, reply)
	}
	return time.Unix(sec, usec*1000).UTC(), nil
}

// Server returns the server's time at t, a reading of time.Now.
func (e Estimate) Server(t time.Time) time.Time {
	return t.Add(e.localAhead + e.Offset).UTC()
}

// Now returns the server's time now, as estimated.
func (e Estimate) Now() time.Time { return e.Server(time.Now()) }

// Local returns the reading of time.Now at which the server's clock shows t: what to wait for
// in this process to act at t by the server's clock.
func (e Estimate) Local(t time.Time) time.Time {
	return t.Add(-e.localAhead - e.Offset)
}
