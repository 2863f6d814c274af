package main

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/pacing"
)

// checkPacing checks --rate (given says whether it was) and --arrival; "" when they are fine.
// Every workload paces: none is refused --rate.
func checkPacing(given bool, rate float64, arrival string) string {
	switch {
	case !given && arrival != "":
		return fmt.Sprintf("--arrival %s needs --rate: arrivals pace the open loop", arrival)
	case !given:
		return ""
	case !(rate > 0): // NaN too
		return fmt.Sprintf("--rate %v: want a positive rate in acquisitions/s (leave --rate out for a closed loop)", rate)
	}
	if err := pacing.Check(rate, arrival); err != nil {
		return "--" + strings.TrimPrefix(err.Error(), pacing.ErrBadSchedule.Error()+": ")
	}
	return ""
}
