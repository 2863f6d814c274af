package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/lockbench/lockbench/clock"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
)

// The worker's --clock: what its --start-at is read by.
const (
	clockRedis = "redis"
	clockLocal = results.ClockLocal
)

// envClockSkew is a test hook: a duration added to the worker's own clock when it estimates the
// deployment's, as another machine's skewed clock would be. Tests set it; nobody else should.
const envClockSkew = "LOCKBENCH_TEST_CLOCK_SKEW"

// measureClock estimates this process's offset from the deployment's clock (see package clock).
// ok is false, with a line on the progress UI, when the deployment's TIME cannot be read: the
// caller then goes by its own clock. envClockSkew skews the clock it measures with.
func (t *runTarget) measureClock(ctx context.Context, ui *progressUI) (est clock.Estimate, source string, ok bool) {
	opt := clock.Options{}
	if v := os.Getenv(envClockSkew); v != "" {
		if skew, err := time.ParseDuration(v); err == nil {
			opt.Now = func() time.Time { return time.Now().Add(skew) }
		}
	}
	est, source, err := t.MeasureClock(ctx, opt)
	switch {
	case errors.Is(err, target.ErrNoMaster):
		return est, "", false
	case err != nil:
		ui.line("the deployment's clock: %v; going by this machine's clock", err) // redacted by MeasureClock
		return est, "", false
	}
	return est, source, true
}

// describeClock is the progress line about the clock a process goes by.
func describeClock(est clock.Estimate, source string) string {
	return fmt.Sprintf("clock: %s's TIME, offset %v ± %v", source, est.Offset.Round(time.Microsecond), (est.RTT / 2).Round(time.Microsecond))
}
