package main

import (
	"github.com/lockbench/lockbench/bench"
)

// benchSpec is the session of runs the flags ask for (package bench runs it).
func (f *runFlags) benchSpec() bench.Spec {
	return bench.Spec{
		Drivers:          f.drivers,
		Workload:         f.workload,
		Config:           f.cfg,
		Lease:            f.lease,
		Repeat:           f.repeat,
		Baseline:         f.baseline,
		Topology:         f.spec.String(),
		Net:              netOfFleet(f),
		Thresholds:       f.thresholds,
		AbortOnFail:      f.abort.on,
		AbortAfter:       f.abort.after,
		Faults:           f.faultFlags.faults,
		TimelineInterval: f.faultFlags.interval,
		StallThreshold:   f.stall.threshold,
		AllowStalls:      f.stall.allow,
	}
}
