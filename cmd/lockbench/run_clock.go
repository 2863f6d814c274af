package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/lockbench/lockbench/clock"
	"github.com/lockbench/lockbench/results"
)

// The worker's --clock: what its --start-at is read by.
const (
	clockRedis = "redis"
	clockLocal = results.ClockLocal
)

// envClockSkew is a test hook: a duration added to the worker's own clock when it estimates the
// deployment's, as another machine's skewed clock would be. Tests set it; nobody else should.
const envClockSkew = "LOCKBENCH_TEST_CLOCK_SKEW"

// clockNode returns the node whose TIME every process of a run reads: the first master by
// address, the same for every process attached to one deployment.
func (t *target) clockNode() (inspectNode, bool) {
	ms := t.masters()
	if len(ms) == 0 {
		return inspectNode{}, false
	}
	return slices.MinFunc(ms, func(a, b inspectNode) int {
		switch {
		case a.addr < b.addr:
			return -1
		case a.addr > b.addr:
			return 1
		}
		return 0
	}), true
}

// measureClock estimates this process's offset from the deployment's clock (see package clock).
// ok is false, with a line on the progress UI, when the deployment's TIME cannot be read: the
// caller then goes by its own clock.
func (t *target) measureClock(ctx context.Context, ui *progressUI) (est clock.Estimate, source string, ok bool) {
	n, found := t.clockNode()
	if !found {
		return est, "", false
	}
	opt := clock.Options{}
	if v := os.Getenv(envClockSkew); v != "" {
		if skew, err := time.ParseDuration(v); err == nil {
			opt.Now = func() time.Time { return time.Now().Add(skew) }
		}
	}
	est, err := clock.Measure(ctx, n.c, opt)
	if err != nil {
		ui.line("the deployment's clock: %v; going by this machine's clock", t.conn.Redact(err.Error()))
		return est, "", false
	}
	return est, n.addr, true
}

// describeClock is the progress line about the clock a process goes by.
func describeClock(est clock.Estimate, source string) string {
	return fmt.Sprintf("clock: %s's TIME, offset %v ± %v", source, est.Offset.Round(time.Microsecond), (est.RTT / 2).Round(time.Microsecond))
}
