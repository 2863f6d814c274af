package main

import (
	"time"

	"github.com/lockbench/lockbench/compose"
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
	topology   string
	spec       compose.Spec
	masterName string
	provider   string
	image      string
	addrs      []string
	out        string
	report     string
	benchfmt   bool
	noResults  bool
	cpuprof    string
	tracefile  string
	thresholds []thresholds.Threshold
	kneeExprs  []string       // sweep's --threshold, gates on the knees (thresholds.ParseKnee)
	fleet      fleetFlags     // --procs, --net-proc, and lockbench worker's own flags (fleet.go)
	gens       generatorFlags // --generators docker (run_generators.go)
	net        netFlag        // --net (run_net.go)
	conn       connFlags      // --user, --password-file, --tls… (run_conn.go)
	faultFlags faultFlags     // run's --fault and --timeline-interval (run_faults.go)
	metrics    metricsFlags   // --metrics-addr, --metrics-linger (run_metrics.go)
	abort      abortFlags     // --abort-on-fail, --abort-after (run_abort.go)
	stall      stallFlags     // --stall-threshold, --allow-stalls (run_stall.go)
	pin        pinFlags       // --pin, --server-cpus, --client-cpus (run_pin.go)
	exec       execFlags      // --exec-null (run_exec.go)
	collect    collectFlags   // --collect, the worker's --run (run_collect.go)
	referee    refereeFlags   // --referee (run_referee.go)
	resource   resourceFlags  // --resource (run_resource.go)
	keyspace   keyspaceFlags  // --clean-existing (run_keyspace.go)
	label      labelFlag      // --label (run_label.go)
	// flagsOnly: parse and check, make no directory and read no file (see parseOnly).
	flagsOnly bool
	scenario  string // --scenario (run_scenario.go)
}
