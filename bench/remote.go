package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/generators"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
)

// Fleet is how a session's runs are made by generator processes apart from this one (lockbench
// run --procs, --generators docker): each a 'lockbench worker' (WorkerSpec) attached to the
// session's target, all starting at one time by the deployment's clock, their results merged
// losslessly. It is a plain value; a nil *Fleet runs every run in this process.
type Fleet struct {
	// Procs is how many processes make each run, 1 to MaxProcs; each runs the spec's
	// Concurrency workers and Rate/Procs of an open loop.
	Procs int
	// Nets are the network conditions of each process (netem syntax, "" for none), when they
	// differ (--net-proc); nil: every process puts the spec's Net on its connections.
	Nets []string
	// Docker, if set, runs the processes as containers (package generators), each with its own
	// network namespace; nil: child processes of Executable sharing a checker in memory.
	Docker *Docker
	// Collect, when its Addr is set, is the Redis the processes store their results in (see
	// package collect); otherwise child processes write files, and containers hand their
	// results to a Redis of the session's own on their network.
	Collect Endpoint
	// Conn are the connection flags an attached deployment was given; the processes get them
	// without the password files (passwords go by environment: conn.Settings.Env). A topology
	// the session's target started with Auth or TLS gives its own.
	Conn conn.Options
	// CPUProfile and Trace, if set, make each child process profile itself to the path with a
	// suffix of its own (.runN.DRIVER.pI); this process only supervises.
	CPUProfile, Trace string
	// Metrics, if set, has every process serve its run's metrics (ServeMetrics with Procs).
	Metrics *Metrics
	// Executable is the lockbench binary the children run; "" is os.Executable().
	Executable string
	// Version is this lockbench's version, which the processes' results must carry.
	Version string
}

// Docker is where --generators docker runs its containers.
type Docker struct {
	// Image is the lockbench image; "" is generators.LocalImage.
	Image string
	// CPUs, if set, pins every container to these CPUs (a cpuset).
	CPUs string
	// Network is the generators' own network, made before the topology started (so that its
	// servers could bind on its gateway).
	Network *generators.Network
}

// remote runs the session's runs on a Fleet.
type remote struct {
	f    *Fleet
	tgt  *target.Target
	spec Spec
	ref  *Referee
	rep  Reporter
	runs int // runs started so far, to name their processes' profiles
}

// worker is the spec of process index of a run of driver in round, without the parts RunShared
// and generators.Run fill (the start time, output, arena).
func (r *remote) worker(driver string, round, index int, addrs []string, clockMode string) WorkerSpec {
	cfg := r.spec.Config // not filled here: Filled keeps an explicit "none" (no warm-up) apart from the default
	if cfg.Rate > 0 {
		// The one place a run's settings are divided over its processes: an open loop's rate R
		// gives each process R/procs, so that together they arrive at R. Each process seeds its
		// own schedule (fleet.Work), so poisson arrivals stay independent.
		cfg.Rate /= float64(r.f.Procs)
	}
	w := WorkerSpec{
		Driver: driver, Workload: r.spec.workload(), Config: cfg, Lease: r.spec.Lease,
		Topology: r.tgt.Spec(), Addrs: addrs, Conn: r.childConn(),
		Procs: r.f.Procs, Index: index, Clock: clockMode, Net: r.spec.Net,
	}
	if r.tgt.Spec().Kind == compose.KindSentinel {
		w.Topology.MasterName = r.tgt.MasterName()
	}
	if r.f.Nets != nil {
		// Every share of the run records the same conditions, the whole fleet's, so that they
		// merge; each process's own are in its fleet entry.
		w.Net, w.FleetNet = r.f.Nets[index], r.spec.Net
	}
	for _, f := range r.spec.Faults {
		if f.Action == faults.Stall && f.Node.N == index+1 {
			w.Stalls = append(w.Stalls, Stall{At: f.At, For: f.For})
		}
	}
	w.Metrics = r.f.Metrics.worker(index, round)
	w.CPUProfile, w.Trace = r.profiles(driver, strconv.Itoa(index))
	return w
}

// childConn is how the processes connect: the started topology's own user and TLS, or the
// flags given for an attached deployment, the password files left out (the environment
// carries the passwords).
func (r *remote) childConn() conn.Options {
	if s := r.tgt.Secure(); s != nil {
		return secureConn(s, r.tgt.Spec().Kind)
	}
	c := r.f.Conn
	c.PasswordFile, c.SentinelPasswordFile = "", ""
	c.Addrs, c.Topology, c.Getenv = nil, "", nil
	return c
}

// secureConn is how the processes connect to a topology of kind started with s: its user and
// TLS, with the name its certificate carries when that is not the address dialled (docker).
func secureConn(s *target.Secure, kind string) conn.Options {
	var c conn.Options
	if s.TLS {
		c.TLS, c.CAFile, c.ServerName = true, s.CAFile, s.ServerName
	}
	if s.Auth {
		c.User = target.SecureUser
		if kind == compose.KindSentinel {
			c.SentinelUser = target.SecureUser
		}
	}
	return c
}

// childAddrs are the addresses the processes dial: as given (URLs, sockets) without a password.
func (r *remote) childAddrs() []string {
	if s := r.tgt.Conn(); s != nil {
		return s.ChildAddrs()
	}
	return r.tgt.Topology().Addrs()
}

// profiles gives process p of this run its --cpuprofile and --trace paths, each its own: the
// parent's profile shows the parent, which only supervises, while the lock traffic is in the
// processes.
func (r *remote) profiles(driver, p string) (cpu, trace string) {
	suffix := fmt.Sprintf(".run%d.%s.p%s", r.runs, strings.NewReplacer(":", "_", "=", "-", "/", "_", ",", "_").Replace(driver), p)
	if r.f.CPUProfile != "" {
		cpu = r.f.CPUProfile + suffix
	}
	if r.f.Trace != "" {
		trace = r.f.Trace + suffix
	}
	return cpu, trace
}

// clock is what the processes wait for the common start by: the deployment's clock, which every
// process reads, when it can be read; this machine's otherwise.
func (r *remote) clock(ctx context.Context, driver string) (mode string, now func() time.Time, local func(time.Time) time.Time) {
	est, source, ok := deploymentClock(ctx, r.tgt, r.rep)
	if !ok {
		return ClockLocal, nil, func(t time.Time) time.Time { return t }
	}
	r.rep.Line("%s: %s", driver, describeClock(est, source))
	return ClockRedis, est.Now, est.Local
}

// env is the processes' environment: the passwords of the deployment and of the referee, which
// never go on a command line, and extra.
func (r *remote) env(extra []string) ([]string, Endpoint, error) {
	env := append(r.tgt.Conn().Env(), extra...)
	if r.ref == nil {
		return env, Endpoint{}, nil
	}
	ep, refEnv, err := r.ref.child()
	if err != nil {
		return nil, ep, err
	}
	return append(env, refEnv...), ep, nil
}

// after ends a run made by several processes once their results are merged into run: it
// settles the referee's count and says what the merge warned of or lost. It reports whether
// the run failed for a lost process.
func (r *remote) after(ctx context.Context, driver, runID string, run *results.Run) (failed bool) {
	run.TopologySpec = r.spec.Topology
	if r.ref != nil {
		cfg := r.spec.Config
		cfg.Fill()
		r.ref.settle(ctx, runID, cfg.Keys, run, r.rep)
	}
	for _, w := range run.Fleet.Warnings {
		r.rep.Line("warning: %s: %s", driver, w)
	}
	if len(run.Fleet.Lost) > 0 {
		// A lost process is a failed run, even when the others measured cleanly.
		r.rep.Line("lockbench run: %s: %s", driver, run.Incomplete)
		return true
	}
	return false
}
