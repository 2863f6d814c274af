package drivers

import (
	"fmt"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/lockcore"
)

// lockcoreTuning is the lockcore driver's command-line options, as lockcore.Options takes them.
// The zero value is lockcore's defaults.
type lockcoreTuning struct {
	noQueue       bool
	handoffLimit  int           // lockcore.Options.HandoffLimit: 0 default, negative strict
	handoffWindow time.Duration // 0 default
	yield         time.Duration // 0 default, negative none
}

var lockcoreOptions = []Option{
	{"handoff", "hand-overs in a row inside the process before a release goes through Redis (default " +
		strconv.Itoa(lockcore.DefaultHandoffLimit) + "; 0: strict, every release through Redis)"},
	{"handoff_window", "longest a lock stays in the process by hand-overs (default " + lockcore.DefaultHandoffWindow.String() + ")"},
	{"yield", "how long the next local waiter holds back after a release others heard (default " +
		lockcore.DefaultHandoffYield.String() + "; 0: none)"},
	{"queue", "on|off: the local waiter queue; off: every goroutine attempts on its own, as before (default on)"},
}

// Options implements Configurable.
func (LockcoreDriver) Options() []Option { return lockcoreOptions }

// Configure implements Configurable.
func (d LockcoreDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	t := d.tune
	for k, v := range opts {
		var err error
		switch k {
		case "handoff":
			var n int
			if n, err = strconv.Atoi(v); err == nil && n < 0 {
				err = fmt.Errorf("must not be negative")
			}
			t.handoffLimit = n
			if n == 0 {
				t.handoffLimit = -1
			}
		case "handoff_window":
			var w time.Duration
			if w, err = time.ParseDuration(v); err == nil && w <= 0 {
				err = fmt.Errorf("must be positive")
			}
			t.handoffWindow = w
		case "yield":
			var y time.Duration
			if y, err = time.ParseDuration(v); err == nil && y < 0 {
				err = fmt.Errorf("must not be negative")
			}
			t.yield = y
			if y == 0 {
				t.yield = -1
			}
		case "queue":
			switch v {
			case "on", "1", "true":
				t.noQueue = false
			case "off", "0", "false":
				t.noQueue = true
			default:
				err = fmt.Errorf("want on or off")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: lockcore option %s=%s: %v", ErrBadOption, k, v, err)
		}
	}
	return LockcoreDriver{spec: spec, tune: t}, nil
}

// apply sets the tuning in opt.
func (t lockcoreTuning) apply(opt *lockcore.Options) {
	opt.NoLocalQueue = t.noQueue
	opt.HandoffLimit = t.handoffLimit
	opt.HandoffWindow = t.handoffWindow
	opt.HandoffYield = t.yield
}

// describe records the tuning in driver settings.
func (t lockcoreTuning) describe(s map[string]string) {
	if t.noQueue {
		s["local_queue"] = "off: every goroutine attempts in Redis on its own"
		return
	}
	s["local_queue"] = "on: one attempt in flight per lock, FIFO local waiters"
	limit, window, yield := t.handoffLimit, t.handoffWindow, t.yield
	if limit == 0 {
		limit = lockcore.DefaultHandoffLimit
	}
	if window == 0 {
		window = lockcore.DefaultHandoffWindow
	}
	if yield == 0 {
		yield = lockcore.DefaultHandoffYield
	}
	if limit < 0 {
		s["handoff"] = "0 (strict: every release through Redis; a release with a local waiter grants it in the same script when nobody else listens)"
	} else {
		s["handoff"] = fmt.Sprintf("up to %d in a row inside the process, within %v of the Redis grant", limit, window)
	}
	if yield < 0 {
		s["handoff_yield"] = "none"
	} else {
		s["handoff_yield"] = yield.String() + " after a release other clients heard"
	}
}
