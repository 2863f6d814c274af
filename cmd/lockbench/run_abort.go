package main

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/spf13/pflag"
)

// abortFlags are --abort-on-fail and --abort-after (run and sweep).
type abortFlags struct {
	on    bool
	after time.Duration
}

func (a *abortFlags) add(fs *pflag.FlagSet, cmd string) {
	what := "a --threshold that can be checked while measuring (absolute: latencies, throughput, errors, violations; ratios are checked at the end) fails: the run stops, its partial result is written (marked incomplete, with the reason) and no further run starts; exit " + fmt.Sprint(exitThresholds)
	if cmd == cmdSweep {
		what = "a step is already past the --slo: the step stops (verdict over, the time saved in the summary) and the sweep goes on as after any step over the SLO"
	}
	fs.BoolVar(&a.on, "abort-on-fail", false, "check every --timeline-interval once --abort-after has passed, and stop when "+what)
	fs.DurationVar(&a.after, "abort-after", bench.DefaultAbortAfter, "with --abort-on-fail: how long each measured phase runs before it is checked")
}

// check returns what is wrong with the flags of cmd, or "": run checks ths, its thresholds,
// while measuring, in one process (procs). A negative --abort-after is bench.Spec.Validate's.
func (a *abortFlags) check(fs *pflag.FlagSet, cmd string, ths []thresholds.Threshold, procs int) string {
	switch {
	case !a.on && fs.Changed("abort-after"):
		return "--abort-after needs --abort-on-fail"
	case !a.on:
		return ""
	case cmd == cmdSweep:
		return "" // the SLO, always given or defaulted
	case len(ths) == 0:
		return "--abort-on-fail needs a --threshold to check (e.g. --threshold 'p99<5ms')"
	case procs > 1:
		return "--abort-on-fail is not available with --procs: each process sees only its share of the run (its thresholds are checked on the merged result at the end)"
	}
	for _, th := range ths {
		if th.CanAbort() {
			return ""
		}
	}
	return "--abort-on-fail: none of the --threshold can be checked while measuring (ratios compare drivers that run one after the other; commands, CPU and driver counts are read at the end)"
}
