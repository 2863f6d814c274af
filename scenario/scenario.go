// Package scenario names the runs of the safety matrix: what each lock really protects when a
// holder stalls past its lease, a master fails over, or a node is cut off. A scenario is a set
// of lockbench run flags — topology, faults, referee, protected resource, the drivers with a
// lease of about a second each — that `lockbench run --scenario NAME` starts from; flags the
// user gives on the command line win over the scenario's. Each scenario is one column of the
// matrix (docs/safety-matrix.md), and says what the theory predicts for it, which the tests
// assert as a direction, not as counts.
package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrUnknown is wrapped by Get's error for a name that is no scenario.
var ErrUnknown = errors.New("unknown scenario")

// Lease is the lease every driver of a scenario gets: renewed by the watchdog of the drivers
// that have one (lockcore, lockcore-fenced, redisson, rueidislock), not renewed by the others.
// Every pause and stall of the matrix outlasts it.
const Lease = "1s"

// Drivers is the matrix's rows: every lock library lockbench drives, each with a lease of Lease
// (see Lease). lockcore and lockcore-fenced come twice: synced (sync=wait, their default where a
// master has replicas: grants confirmed by WAIT) and not (sync=off, the fast opt-out). The
// negative control, unsafe, is not a row: it is broken on purpose.
var Drivers = []string{
	"lockcore:watchdog=" + Lease + ":sync=wait",
	"lockcore:watchdog=" + Lease + ":sync=off",
	"lockcore-fenced:watchdog=" + Lease + ":sync=wait",
	"lockcore-fenced:watchdog=" + Lease + ":sync=off",
	"redisson:watchdog=" + Lease,
	"rueidislock:validity=" + Lease,
	"redsync:lease=" + Lease,
	"redislock:lease=" + Lease,
	"naive:lease=" + Lease,
}

// Scenario is one column of the safety matrix.
type Scenario struct {
	// Name is what --scenario takes.
	Name string
	// Column is the matrix's column heading.
	Column string
	// Predicts is what the theory says each kind of lock shows, in one or two sentences.
	Predicts string
	// Args are the lockbench run flags of the scenario, each flag and its value one element
	// ("--fault=pause-client:gen1@1s+2500ms").
	Args []string
	// Docker says whether the scenario needs a Docker engine (--provider docker).
	Docker bool
	// PerDriver says the column takes one run per driver: its fault changes the deployment for
	// good (an isolated master is replaced), so its --driver is the first row alone, and the
	// matrix runs it once per row with --driver ROW.
	PerDriver bool
}

// common are every scenario's flags: a referee that no fault reaches, the fenced resource on it,
// and 32 keys for 16 workers a process with holds of 20 ms, so that at any moment about half the
// workers of every process are inside a critical section (a pause or a stall catches 5 to 15 of
// them, where 8 keys caught none in one run out of a dozen under the test suite's load), and
// a lock given up by a stalled holder is soon taken by a worker of the other process.
var common = []string{
	"--referee=native",
	"--resource=fenced",
	"--keys=32",
	"--concurrency=16",
	"--hold=20ms",
	"--warmup=500ms",
}

var all = []Scenario{
	{
		Name:   "pause-over-lease",
		Column: "process pause > lease",
		Predicts: "Every lock expires while its holder is stopped (its watchdog stops with it), so every driver grants " +
			"the lock again and the paused holder wakes up writing: double grants and corrupt writes for every driver " +
			"without a fencing token; the fenced resource rejects lockcore-fenced's stale writes instead.",
		Args: []string{"--procs=2", "--fault=pause-client:gen1@1500ms+2500ms", "--duration=6s"},
	},
	{
		Name:   "stall-over-lease",
		Column: "stall > lease, watchdog running",
		Predicts: "A holder stuck in its critical section keeps a renewed lock: drivers whose library renews the lease " +
			"(lockcore, lockcore-fenced, redisson, rueidislock) grant it to nobody else; those that never renew " +
			"(redsync, redislock, naive) let it expire under the stalled holder: double grants and corrupt writes.",
		Args: []string{"--procs=2", "--fault=stall:gen1@1500ms+2500ms", "--duration=6s"},
	},
	{
		Name:   "sentinel-failover",
		Column: "sentinel fail-over under load",
		Predicts: "Replication is asynchronous: a grant the old master had not yet sent to the promoted replica is lost, " +
			"and the lock can be granted again while its first holder still holds it. Whether a run catches it depends " +
			"on timing: any driver may show double grants; the fenced resource still orders lockcore-fenced's writes, " +
			"unless the lost grant took the token counter back with it.",
		Args: []string{"--procs=2", "--topology=sentinel", "--fault=failover@2s", "--duration=6s"},
	},
	{
		Name:   "partition-master",
		Column: "master partitioned (isolate)",
		Predicts: "The old master, cut off from its replicas and sentinels, still serves the clients that reach it while " +
			"the sentinels promote a replica: two masters grant the same lock to clients on either side, until the old " +
			"one is demoted and its writes are thrown away.",
		Args: []string{"--procs=2", "--topology=sentinel", "--provider=docker", "--image=lockbench/redis:local",
			"--fault=isolate:master@2s+6s", "--duration=12s"},
		Docker:    true,
		PerDriver: true,
	},
	{
		Name:   "redlock-restart",
		Column: "RedLock, a master restarted empty",
		Predicts: "On 5 independent masters a lock needs 3. A master that restarts without persistence forgets the locks " +
			"it granted, so a second client can gather a majority of its own while the first still holds: double grants " +
			"for the RedLock drivers (lockcore on masters, redsync); the others do not run on masters:N.",
		Args: []string{"--procs=2", "--topology=masters:5", "--fault=kill:master1@2s", "--fault=restart:master1@2200ms", "--duration=6s"},
	},
}

// All returns the scenarios in the matrix's column order.
func All() []Scenario { return slices.Clone(all) }

// Names returns the scenarios' names, in column order.
func Names() []string {
	n := make([]string, len(all))
	for i, s := range all {
		n[i] = s.Name
	}
	return n
}

// Get returns the scenario name, or an error wrapping ErrUnknown that lists the names.
func Get(name string) (Scenario, error) {
	for _, s := range all {
		if s.Name == name {
			return s, nil
		}
	}
	return Scenario{}, fmt.Errorf("%w %q: want one of %s", ErrUnknown, name, strings.Join(Names(), ", "))
}

// Flags returns the scenario's run flags in order: the common ones, the scenario's own, then
// --driver with the matrix's rows, or the first row alone for a PerDriver scenario (scenario
// arguments win over the common ones, as a later flag does).
func (s Scenario) Flags() []string {
	f := slices.Concat(common, s.Args)
	if s.PerDriver {
		return append(f, "--driver="+Drivers[0])
	}
	return append(f, "--driver="+strings.Join(Drivers, ","))
}

// Commands are the command lines that reproduce the column: one, or one per row for a
// PerDriver scenario.
func (s Scenario) Commands() []string {
	if !s.PerDriver {
		return []string{"lockbench run --scenario " + s.Name}
	}
	c := make([]string, len(Drivers))
	for i, d := range Drivers {
		c[i] = "lockbench run --scenario " + s.Name + " --driver " + d
	}
	return c
}
