package main

import (
	"cmp"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/faults"
)

// The specs of package bench that run's flags make, built from the groups in one place.

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
		Net:              cmp.Or(f.fleet.runNet, f.net.String()), // runNet: run only, after check
		Thresholds:       f.thresholds,
		AbortOnFail:      f.abort.on,
		AbortAfter:       f.abort.after,
		Faults:           f.faultFlags.faults,
		TimelineInterval: f.faultFlags.interval,
		StallThreshold:   f.stall.threshold,
		AllowStalls:      f.stall.allow,
	}
}

// faultCheck is what run's faults are checked against (bench.FaultCheck), but the faults.
func (f *runFlags) faultCheck() bench.FaultCheck {
	return bench.FaultCheck{Runs: f.repeat * len(f.drivers), Attached: len(f.addrs) > 0, AllowAttached: f.faultFlags.allowAttached,
		Faults: f.faultFlags.faults, Topology: f.spec, Provider: f.provider,
		Run: faults.Layout{Procs: f.fleet.procs, Duration: f.cfg.Duration, Containers: f.gens.docker(),
			Partition: f.net.cond != nil}} // the --net proxy partitions (bench.ServerSchedule)
}

// refereeSpec is the referee run asks for, nil for none.
func (f *runFlags) refereeSpec() *bench.RefereeSpec {
	if f.referee.addr == "" {
		return nil
	}
	return &bench.RefereeSpec{Endpoint: bench.Endpoint{Addr: f.referee.addr, CAFile: f.referee.caFile}, Resource: f.resource.kind,
		NativeHost: f.gens.nativeHost(), ForResource: f.resource.autoReferee}
}

// fleetSpec is the generator processes the flags ask for (--procs, --generators docker), or nil
// for runs in this process alone. metrics is where the processes serve theirs.
func (f *runFlags) fleetSpec(metrics *bench.Metrics) *bench.Fleet {
	if f.fleet.procs < 2 && !f.gens.docker() {
		return nil
	}
	fl := &bench.Fleet{
		Procs:      f.fleet.procs,
		Collect:    bench.Endpoint{Addr: f.collect.addr, CAFile: f.collect.caFile},
		Conn:       f.conn.opt,
		CPUProfile: f.cpuprof,
		Trace:      f.tracefile,
		Metrics:    metrics,
		Version:    version,
	}
	fl.Nets = f.fleet.nets
	if f.gens.docker() {
		fl.Docker = &bench.Docker{Image: f.gens.image, CPUs: f.gens.cpus, Network: f.gens.network}
	}
	return fl
}

// workerSpec is the spec of the worker the flags describe (lockbench worker's flags).
func (f *runFlags) workerSpec() bench.WorkerSpec {
	ff := f.fleet
	w := bench.WorkerSpec{
		Driver:     f.drivers[0],
		Workload:   f.workload,
		Config:     f.cfg,
		Lease:      f.lease,
		Topology:   f.spec,
		Addrs:      f.addrs,
		Conn:       f.conn.opt,
		Procs:      ff.procs,
		Index:      ff.index,
		StartAt:    ff.startAt,
		Clock:      ff.clock,
		Output:     ff.output,
		Out:        f.out,
		NoResults:  f.noResults,
		Arena:      ff.arena,
		Net:        f.net.String(),
		FleetNet:   ff.fleetNet,
		RunID:      f.collect.runID,
		Collect:    bench.Endpoint{Addr: f.collect.addr, CAFile: f.collect.caFile},
		Referee:    bench.Endpoint{Addr: f.referee.addr, CAFile: f.referee.caFile},
		Resource:   f.resource.kind,
		Metrics:    bench.WorkerMetrics{Addr: f.metrics.addr, RunID: f.metrics.runID, Round: f.metrics.round, Linger: f.metrics.linger},
		CPUProfile: f.cpuprof,
		Trace:      f.tracefile,
		Stalls:     ff.stalls,
	}
	return w.Filled()
}
