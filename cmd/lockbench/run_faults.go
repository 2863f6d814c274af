package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
	"github.com/spf13/pflag"
)

// minTimelineInterval bounds --timeline-interval: shorter points cost a histogram merge each
// and show nothing a fail-over gap of tens of milliseconds does not.
const minTimelineInterval = 10 * time.Millisecond

// faultFlags are run's --fault, --allow-faults-on-attached and --timeline-interval.
type faultFlags struct {
	specs         []string
	faults        []faults.Fault
	allowAttached bool
	interval      time.Duration
}

const faultHelp = "fault during every measured phase, repeatable: ACTION[:NODE]@AT[+FOR], AT from the start of the measured phase: " +
	"kill:master@3s, pause:master@3s+2s (SIGSTOP, SIGCONT 2s later), restart:master@8s (the server kill:master killed, same port and config), " +
	"kill:replica1@3s, kill:sentinel2@3s, kill:node3@3s (the Nth node as the topology lists them), failover@3s (SENTINEL FAILOVER; on cluster CLUSTER FAILOVER on replica1, or failover:replica2@3s); " +
	"kill, pause and restart only on topologies lockbench started natively; partition:master@3s+2s cuts the clients off from the node (needs --net; --net latency=0 adds no delay); " +
	"isolate:master@3s+8s cuts the master off from its replicas and sentinels while the clients still reach it (--provider docker --topology sentinel); " +
	"client faults on lockbench's generator processes (genN, 1-based; see docs/client-faults.md): pause-client:gen2@3s+2s stops generator 2 (SIGSTOP, or docker pause; its watchdog stops too) and resumes it 2s later (needs --procs 2 or more, or --generators docker), " +
	"stall:gen1@3s+2s keeps generator 1's workers that hold a lock at 3s inside their critical section until 5s while the process and its watchdog run on; with faults, errors are the expected effect and do not fail the run, violations and failed faults do"

func addFaultFlags(fs *pflag.FlagSet, ff *faultFlags) {
	fs.StringArrayVar(&ff.specs, "fault", nil, faultHelp)
	fs.BoolVar(&ff.allowAttached, "allow-faults-on-attached", false, "allow --fault on a deployment given by --addr (lockbench can then only ask for a fail-over: it has no processes to kill or pause)")
	fs.DurationVar(&ff.interval, "timeline-interval", results.DefaultTimelineInterval, "length of a timeline point, at least "+minTimelineInterval.String()+"; e.g. 100ms to see a fail-over gap")
}

// checkFaultFlags parses the faults and checks them against the topology lockbench will start,
// before anything starts; faults on an attached deployment are checked once attached
// (checkAttachedFaults). It returns a message for a usage error, or "".
func checkFaultFlags(f *runFlags) string {
	ff := &f.faultFlags
	if ff.interval < minTimelineInterval {
		return fmt.Sprintf("--timeline-interval %v: want at least %v", ff.interval, minTimelineInterval)
	}
	for _, s := range ff.specs {
		flt, err := faults.Parse(s)
		if err != nil {
			return "--fault: " + err.Error()
		}
		ff.faults = append(ff.faults, flt)
	}
	if len(ff.faults) == 0 {
		return ""
	}
	if runs := f.repeat * len(f.drivers); runs > 1 && slices.ContainsFunc(ff.faults, func(x faults.Fault) bool { return x.Action == faults.Isolate }) {
		// The first run's isolation ends in a fail-over: in the next, the node it names is a
		// replica, and isolating it would show nothing while looking like the same fault.
		return fmt.Sprintf("--fault isolate with %d runs (--driver × --repeat): after the first, the isolated master has been replaced by a promoted replica and cannot be isolated again; run one driver and one round per invocation", runs)
	}
	serverFaults := slices.ContainsFunc(ff.faults, func(x faults.Fault) bool { return !x.Action.Client() })
	if len(f.addrs) > 0 && serverFaults {
		if !ff.allowAttached {
			return "--fault on an attached deployment (--addr) is refused: it would kill, pause or fail over servers lockbench did not start; add --allow-faults-on-attached to ask for fail-overs there anyway (the client faults pause-client and stall act on lockbench's own processes, and need no leave)"
		}
		return "" // checked against the deployment once attached
	}
	l := faults.LayoutFor(f.spec)
	l.Signals = f.provider == providerNative
	l.Isolate = f.provider == providerDocker && f.spec.Kind == compose.KindSentinel
	if !l.Signals {
		l.NoSignals = "--provider " + f.provider + " is not supported for kill, pause and restart yet (use --provider native)"
	}
	return validateFaults(f, l)
}

// checkAttachedFaults checks the faults against the deployment lockbench attached to, before
// anything is measured. It returns a message for a usage error, or "".
func checkAttachedFaults(f *runFlags, tgt *runTarget) string {
	if len(f.faultFlags.faults) == 0 || !tgt.Attached() {
		return ""
	}
	l := faults.LayoutOf(tgt.Description())
	l.NoSignals = "lockbench attached to this deployment (--addr) and has no processes to signal"
	return validateFaults(f, l)
}

func validateFaults(f *runFlags, l faults.Layout) string {
	l.Procs, l.Duration = f.fleet.procs, f.cfg.Duration
	l.Containers = f.gens.kind == generatorsDocker
	l.Partition = f.net.cond != nil // the --net proxy partitions (runner.partitioner)
	if err := faults.Validate(f.faultFlags.faults, l); err != nil {
		return "--fault: " + err.Error()
	}
	return ""
}

// faultRun is one run's faults and what became of them: the schedule lockbench runs (server
// faults in this process, or pause-client on the generator processes) fills events; a stall is
// carried out by the generator process and comes back in the run's own Faults.
type faultRun struct {
	faults []faults.Fault
	// watch finds the first grant after each fault; nil when the grants happen in other
	// processes (--procs, --generators docker).
	watch *results.GrantWatch
	// events are the scheduled faults' outcomes, by index in faults; set once the schedule
	// ended.
	events []faults.Event
}

// scheduled returns the faults lockbench carries out itself (all but stalls), and for each its
// index in fr.faults.
func (fr *faultRun) scheduled() (fs []faults.Fault, idx []int) {
	for i, f := range fr.faults {
		if f.Action != faults.Stall {
			fs, idx = append(fs, f), append(idx, i)
		}
	}
	return fs, idx
}

// runSchedule runs the scheduled faults against s (its Faults and OnFire set here) from
// start until ctx ends, and keeps their events.
func (fr *faultRun) runSchedule(ctx context.Context, s *faults.Schedule, start time.Time) {
	fs, idx := fr.scheduled()
	s.Faults = fs
	if fr.watch != nil {
		s.OnFire = func(i int, at time.Time) { fr.watch.Mark(idx[i], at) }
	}
	events := s.Run(ctx, start)
	fr.events = make([]faults.Event, len(fr.faults))
	for i, ev := range events {
		fr.events[idx[i]] = ev
	}
}

// stalls returns the stalls of generator gen (1-based) as the workload carries them out.
func (fr *faultRun) stalls(gen int) []workloads.Stall {
	var out []workloads.Stall
	for _, f := range fr.faults {
		if f.Action == faults.Stall && f.Node.N == gen {
			out = append(out, workloads.Stall{At: f.At, For: f.For, Spec: f.Spec, Node: f.Node.String()})
		}
	}
	return out
}

// record sets run.Faults to what became of every fault, in the order given: a scheduled
// fault's event, a stall's account by the process that carried it out (in run.Faults as the
// workload recorded it).
func (fr *faultRun) record(run *results.Run) {
	if len(fr.faults) == 0 {
		return
	}
	own := run.Faults
	run.Faults = nil
	for i, f := range fr.faults {
		if f.Action != faults.Stall {
			ev := faults.Event{Fault: f, Err: faults.ErrNotFired}
			if i < len(fr.events) {
				ev = fr.events[i]
			}
			run.Faults = append(run.Faults, faultResult(ev, fr.watch, i))
			continue
		}
		j := slices.IndexFunc(own, func(o results.Fault) bool {
			return o.Action == string(faults.Stall) && o.Node == f.Node.String() && o.AtS == f.At.Seconds() && o.ForS == f.For.Seconds()
		})
		if j < 0 {
			run.Faults = append(run.Faults, results.Fault{Spec: f.Spec, Action: string(f.Action), Node: f.Node.String(), AtS: f.At.Seconds(), ForS: f.For.Seconds(),
				Error: "no account of it: " + f.Node.String() + " left no result"})
			continue
		}
		rf := own[j]
		rf.Spec = f.Spec // as the user wrote it
		if !rf.Fired {
			rf.Error = faults.ErrNotFired.Error()
		}
		run.Faults = append(run.Faults, rf)
	}
}

// withFaults sets plan's timeline interval and, when there are faults, what carries them out in
// this process during the measured phase: the stalls of gen1 go to the workload, the others to
// a schedule that ends with the phase (or with ctx), resuming whatever it paused. The returned
// faultRun records what the faults did once the run is done; runs made by several processes
// schedule their pause-client faults with it themselves (run_clientfaults.go).
func (r *runner) withFaults(ctx context.Context, plan *workloads.Plan) *faultRun {
	ff := &r.f.faultFlags
	plan.TimelineInterval = ff.interval
	fr := &faultRun{faults: ff.faults}
	if len(ff.faults) == 0 {
		return fr
	}
	if runs := r.f.repeat * len(r.f.drivers); runs > 1 && !r.faultNoted {
		r.faultNoted = true
		if n := staysDown(ff.faults); n != "" {
			r.ui.line("note: the faults run in each of the %d runs, and nothing is restored between them: %s killed in one run stays down in the next unless a restart brings it back", runs, n)
		}
	}
	if r.separateGenerators() {
		return fr // the generator processes measure: see runProcs and runGenerators
	}
	fr.watch = results.NewGrantWatch(len(ff.faults))
	plan.Grants = fr.watch
	plan.Stalls = fr.stalls(1)
	if sched, _ := fr.scheduled(); len(sched) == 0 {
		return fr
	}
	s := &faults.Schedule{Target: faults.NewDeployment(r.tgt.Topology(), r.tgt.Conn()), Partitioner: r.partitioner(), Isolator: r.isolator()}
	plan.Measure = func(start time.Time) func() {
		sctx, cancel := context.WithDeadline(ctx, start.Add(r.f.cfg.Duration))
		done := make(chan struct{})
		go func() {
			defer close(done)
			fr.runSchedule(sctx, s, start)
		}()
		return func() { cancel(); <-done }
	}
	return fr
}

// separateGenerators says the run's workers run in generator processes apart from this one
// (--procs 2 or more, or --generators docker).
func (r *runner) separateGenerators() bool { return r.f.fleet.procs > 1 || r.f.gens.docker() }

// partitioner is the network proxy that partition faults go through (a *netem.Net has the
// method set of faults.Partitioner); nil: this run has none (no --net), and validateFaults
// refuses them.
func (r *runner) partitioner() faults.Partitioner {
	if r.tgt.Net() == nil {
		return nil
	}
	return r.tgt.Net()
}

// isolator is what isolate faults go through: the Docker provider's sentinel topology, whose
// first master has a network of its own; nil for any other, and validateFaults refuses them.
func (r *runner) isolator() faults.Isolator {
	if t, ok := r.tgt.Topology().(*docker.Topology); ok && t.Kind() == compose.KindSentinel {
		return dockerIsolator{t}
	}
	return nil
}

// dockerIsolator isolates a docker sentinel topology's master from its peers with docker network
// disconnect (docker.Topology.Partition) and lets it rejoin (Heal).
type dockerIsolator struct{ t *docker.Topology }

func (d dockerIsolator) Isolate(ctx context.Context, addr string) error {
	return d.t.Partition(ctx, addr)
}

func (d dockerIsolator) Rejoin(ctx context.Context, _ string) error { return d.t.Heal(ctx) }

// faultResult is what the result file records of one fault; watch may be nil.
func faultResult(ev faults.Event, watch *results.GrantWatch, i int) results.Fault {
	f := results.Fault{
		Spec:   ev.Fault.Spec,
		Action: string(ev.Fault.Action),
		Node:   ev.Fault.Node.String(),
		Addr:   ev.Addr,
		AtS:    ev.Fault.At.Seconds(),
		ForS:   ev.Fault.For.Seconds(),
		Fired:  ev.Fired,
	}
	if ev.Fired {
		f.FiredS, f.TookS, f.LastedS = ev.FiredAt.Seconds(), ev.Took.Seconds(), ev.Lasted.Seconds()
		if watch != nil {
			if d, ok := watch.First(i); ok {
				f.SetFirstGrant(ev.InEffectAt - ev.FiredAt + d) // marked at InEffectAt
			}
		}
	}
	if ev.Err != nil {
		f.Error = ev.Err.Error()
	}
	return f
}

// faultsFailed returns the faults of run that failed (not the ones the phase ended before).
func faultsFailed(run *results.Run) []results.Fault {
	var out []results.Fault
	for _, f := range run.Faults {
		if f.Error != "" && f.Error != faults.ErrNotFired.Error() {
			out = append(out, f)
		}
	}
	return out
}

// strandedOnly reports whether every key the post-run audit found after a run with faults still
// has a TTL: locks a fault stranded (their release went to a dead or paused server, or was lost
// in a fail-over) that will expire. Keys without a TTL, or more than the audit lists, are not
// excused.
func strandedOnly(run *results.Run) bool {
	a := run.Audit
	if len(run.Faults) == 0 || a == nil || a.Leftovers == 0 || int64(len(a.Keys)) < a.Leftovers {
		return false
	}
	for _, k := range a.Keys {
		if k.TTLMS < 0 {
			return false
		}
	}
	return true
}

// staysDown names the nodes the schedule kills and does not restart, or "".
func staysDown(fs []faults.Fault) string {
	var out []string
	for _, k := range fs {
		if k.Action != faults.Kill {
			continue
		}
		restarted := slices.ContainsFunc(fs, func(f faults.Fault) bool {
			return f.Action == faults.Restart && f.Node == k.Node && f.At > k.At
		})
		if !restarted && !slices.Contains(out, k.Node.String()) {
			out = append(out, k.Node.String())
		}
	}
	return strings.Join(out, ", ")
}
