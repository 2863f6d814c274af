package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/lockbench/lockbench/clock"
	"github.com/lockbench/lockbench/target"
)

// EnvClockSkew is a test hook: a duration added to this process's clock when it estimates the
// deployment's, as another machine's skewed clock would be. Tests set it; nobody else should.
const EnvClockSkew = "LOCKBENCH_TEST_CLOCK_SKEW"

// deploymentClock estimates this process's offset from the deployment's clock (see package
// clock). ok is false, with a line to rep, when the deployment's TIME cannot be read: the caller
// then goes by its own clock.
func deploymentClock(ctx context.Context, t *target.Target, rep Reporter) (est clock.Estimate, source string, ok bool) {
	opt := clock.Options{}
	if v := os.Getenv(EnvClockSkew); v != "" {
		if skew, err := time.ParseDuration(v); err == nil {
			opt.Now = func() time.Time { return time.Now().Add(skew) }
		}
	}
	est, source, err := t.MeasureClock(ctx, opt)
	switch {
	case errors.Is(err, target.ErrNoMaster):
		return est, "", false
	case err != nil:
		rep.Line("the deployment's clock: %v; going by this machine's clock", err) // redacted by MeasureClock
		return est, "", false
	}
	return est, source, true
}

// describeClock is the progress line about the clock a process goes by.
func describeClock(est clock.Estimate, source string) string {
	return fmt.Sprintf("clock: %s's TIME, offset %v ± %v", source, est.Offset.Round(time.Microsecond), (est.RTT / 2).Round(time.Microsecond))
}
