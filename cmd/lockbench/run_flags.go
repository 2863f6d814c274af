package main

import (
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/netem"
	"github.com/lockbench/lockbench/scenario"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/thresholds"
	"github.com/lockbench/lockbench/workloads"
)

// runFlags are the parsed flags of lockbench run.
type runFlags struct {
	drivers    []string
	workload   string
	cfg        workloads.Config
	lease      time.Duration
	repeat     int
	baseline   string
	deploy     target.Flags // --topology, --provider, --addr, the connection flags…
	out        string
	report     string
	benchfmt   bool
	noResults  bool
	cpuprof    string
	tracefile  string
	thresholds []thresholds.Threshold
	kneeExprs  []string           // sweep's --threshold, gates on the knees (thresholds.ParseKnee)
	fleet      bench.FleetFlags   // --procs, --net-proc, and lockbench worker's own flags
	gens       generatorFlags     // --generators docker (run_generators.go)
	net        netem.Flag         // --net
	faultFlags bench.FaultFlags   // run's --fault and --timeline-interval
	metrics    bench.MetricsFlags // --metrics-addr, --metrics-linger
	abort      bench.AbortFlags   // --abort-on-fail, --abort-after
	stall      bench.StallFlags   // --stall-threshold, --allow-stalls
	pin        bench.PinFlags     // --pin, --server-cpus, --client-cpus (placed by run_pin.go)
	exec       execFlags          // --exec-null (run_exec.go)
	collect    collect.Flags      // --collect, the worker's --run
	referee    bench.RefereeFlags // --referee, --resource
	keyspace   keyspaceFlags      // --clean-existing (run_keyspace.go)
	label      labelFlag          // --label (run_label.go)
	// flagsOnly: parse and check, make no directory and read no file (see parseOnly).
	flagsOnly bool
	scenario  scenario.Flag // --scenario
}
