package drivers

import (
	"fmt"
	"strconv"
	"time"
)

// goRedisTuning is the command-line options of the drivers built on go-redis alone (naive,
// redislock): whether the client sends a command again after it failed on the network or timed
// out. A lock command sent again after its first attempt ran cannot grant twice (SET NX finds the
// key, compare-and-delete finds it gone), but it can strand a lock: the first SET took it, the
// retry reports it taken, and nobody releases it until its lease ends. The fail-over runs in the
// manual (docs/drivers.md) show both settings side by side.
type goRedisTuning struct {
	spec string
	// retries is go-redis's MaxRetries: 0 its default (3 retries), -1 none.
	retries int
	// lease is the driver's own lock TTL, over the run's --lease; 0: the run's.
	lease time.Duration
}

// goRedisDefaultRetries is go-redis v9's MaxRetries when the option is left at zero.
const goRedisDefaultRetries = 3

var goRedisOptions = []Option{
	{"retries", "go-redis MaxRetries: how many times a command that failed on the network or timed out is sent again, 0 to 10 (0: never; default go-redis's " + strconv.Itoa(goRedisDefaultRetries) + ")"},
	leaseOption,
}

// leaseOption is the lock TTL of a driver that never renews it, for runs that give each driver
// its own (the safety matrix: every driver's lock lasts about 1s, renewed or not).
var leaseOption = Option{"lease", "this driver's lock TTL, never renewed, over --lease (e.g. 1s; at least 3ms)"}

// parseLease reads a lease= option.
func parseLease(driver, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 3*time.Millisecond {
		return 0, fmt.Errorf("%w: %s option lease=%s: want a duration of at least 3ms, e.g. 1s", ErrBadOption, driver, v)
	}
	return d, nil
}

// leaseOr is the tuning's lease if set, else the run's, else def.
func leaseOr(tuned, run, def time.Duration) time.Duration {
	switch {
	case tuned > 0:
		return tuned
	case run > 0:
		return run
	}
	return def
}

// configureGoRedis reads the go-redis drivers' options.
func configureGoRedis(driver, spec string, opts map[string]string) (goRedisTuning, error) {
	t := goRedisTuning{spec: spec}
	for k, v := range opts {
		if k == "lease" {
			l, err := parseLease(driver, v)
			if err != nil {
				return t, err
			}
			t.lease = l
			continue
		}
		if k != "retries" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 10 {
			return t, fmt.Errorf("%w: %s option retries=%s: want a whole number from 0 to 10", ErrBadOption, driver, v)
		}
		t.retries = n
		if n == 0 {
			t.retries = -1
		}
	}
	return t, nil
}

// name is the driver's name in results: its spec when it has options.
func (t goRedisTuning) name(driver string) string {
	if t.spec != "" {
		return t.spec
	}
	return driver
}

// describe records the tuning in driver settings.
func (t goRedisTuning) describe(s map[string]string) {
	switch {
	case t.retries < 0:
		s["max_retries"] = "0: a command that failed on the network or timed out is not sent again"
	case t.retries == 0:
		s["max_retries"] = strconv.Itoa(goRedisDefaultRetries) + " (go-redis default)"
	default:
		s["max_retries"] = strconv.Itoa(t.retries)
	}

}
