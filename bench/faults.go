package bench

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/workloads"
)

// FaultRun is one run's faults and what became of them: the schedule lockbench runs (server
// faults in this process, or pause-client on the generator processes) fills events; a stall is
// carried out by the generator process and comes back in the run's own Faults.
type FaultRun struct {
	faults []faults.Fault
	// watch finds the first grant after each fault; nil when the grants happen in other
	// processes (--procs, --generators docker).
	watch *results.GrantWatch
	// events are the scheduled faults' outcomes, by index in faults; set once the schedule
	// ended.
	events []faults.Event
}

// Scheduled returns the faults lockbench carries out itself (all but stalls), and for each its
// index in fr.faults.
func (fr *FaultRun) Scheduled() (fs []faults.Fault, idx []int) {
	for i, f := range fr.faults {
		if f.Action != faults.Stall {
			fs, idx = append(fs, f), append(idx, i)
		}
	}
	return fs, idx
}

// RunSchedule runs the scheduled faults against s (its Faults and OnFire set here) from
// start until ctx ends, and keeps their events.
func (fr *FaultRun) RunSchedule(ctx context.Context, s *faults.Schedule, start time.Time) {
	fs, idx := fr.Scheduled()
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
func (fr *FaultRun) stalls(gen int) []workloads.Stall {
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
func (fr *FaultRun) record(run *results.Run) {
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

// ServerSchedule is a fault schedule's deployment side for t: what kill, pause, restart and
// failover act on, the --net proxy partitions go through, and the Docker sentinel topology
// isolate faults go through. Its Faults, Clients and OnFire are the caller's to set.
func ServerSchedule(t *target.Target) faults.Schedule {
	s := faults.Schedule{Target: faults.NewDeployment(t.Topology(), t.Conn())}
	if t.Net() != nil { // a *netem.Net has the method set of faults.Partitioner
		s.Partitioner = t.Net()
	}
	if dt, ok := t.Topology().(*docker.Topology); ok && dt.Kind() == compose.KindSentinel {
		// Its first master has a network of its own.
		s.Isolator = dockerIsolator{dt}
	}
	return s
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
