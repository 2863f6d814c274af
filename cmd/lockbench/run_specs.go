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
		Topology:         f.deploy.Shape.String(),
		Net:              cmp.Or(f.fleet.RunNet, f.net.String()), // RunNet: run only, after Check
		Thresholds:       f.thresholds,
		AbortOnFail:      f.abort.On,
		AbortAfter:       f.abort.After,
		Faults:           f.faultFlags.Faults,
		TimelineInterval: f.faultFlags.Interval,
		StallThreshold:   f.stall.Threshold,
		AllowStalls:      f.stall.Allow,
	}
}

// faultCheck is what run's faults are checked against (bench.FaultCheck), but the faults.
func (f *runFlags) faultCheck() bench.FaultCheck {
	return bench.FaultCheck{Runs: f.repeat * len(f.drivers), Attached: f.deploy.Attached(), AllowAttached: f.faultFlags.AllowAttached,
		Faults: f.faultFlags.Faults, Topology: f.deploy.Shape, Provider: f.deploy.Provider,
		Run: faults.Layout{Procs: f.fleet.Procs, Duration: f.cfg.Duration, Containers: f.gens.docker(),
			Partition: f.net.Conditions != nil}} // the --net proxy partitions (bench.ServerSchedule)
}

// fleetSpec is the generator processes the flags ask for (--procs, --generators docker), or nil
// for runs in this process alone. metrics is where the processes serve theirs.
func (f *runFlags) fleetSpec(metrics *bench.Metrics) *bench.Fleet {
	if f.fleet.Procs < 2 && !f.gens.docker() {
		return nil
	}
	fl := &bench.Fleet{
		Procs:      f.fleet.Procs,
		Collect:    bench.Endpoint{Addr: f.collect.Addr, CAFile: f.collect.CAFile},
		Conn:       f.deploy.Conn,
		CPUProfile: f.cpuprof,
		Trace:      f.tracefile,
		Metrics:    metrics,
		Version:    version,
	}
	fl.Nets = f.fleet.Nets
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
		Topology:   f.deploy.Shape,
		Addrs:      f.deploy.Addrs,
		Conn:       f.deploy.Conn,
		Procs:      ff.Procs,
		Index:      ff.Index,
		StartAt:    ff.StartAt,
		Clock:      ff.Clock,
		Output:     ff.Output,
		Out:        f.out,
		NoResults:  f.noResults,
		Arena:      ff.Arena,
		Net:        f.net.String(),
		FleetNet:   ff.FleetNet,
		RunID:      f.collect.RunID,
		Collect:    bench.Endpoint{Addr: f.collect.Addr, CAFile: f.collect.CAFile},
		Referee:    f.referee.Endpoint(),
		Resource:   f.referee.Resource,
		Metrics:    f.metrics.Worker(),
		CPUProfile: f.cpuprof,
		Trace:      f.tracefile,
		Stalls:     ff.Stalls,
	}
	return w.Filled()
}
