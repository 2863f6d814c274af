package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// WorkerCommand is the lockbench command a WorkerSpec is the command line of.
const WorkerCommand = "worker"

// The clocks a worker's StartAt is read by (WorkerSpec.Clock).
const (
	// ClockRedis is the deployment's own clock (TIME, its offset from this machine's estimated
	// over several round trips), so that machines whose clocks disagree start together.
	ClockRedis = "redis"
	// ClockLocal is this machine's clock.
	ClockLocal = results.ClockLocal
)

// MaxProcs bounds the processes of a run (WorkerSpec.Procs, Fleet.Procs): each is a Go runtime
// with its own clients.
const MaxProcs = 256

// DefaultOut is the directory run, sweep and a worker write their result files in when they
// are given no other (--out), relative to the working directory: the user's, or /data in the
// lockbench image. It is not "results", which in a clone of lockbench is the Go package of that
// name: a run started from the repository's root would write into the source tree.
const DefaultOut = "lockbench-results"

// WorkerSpec is one generator process of a run made by several: the run's settings for one
// driver, the process's place in the run, and where it hands its result back. It is a plain
// value; its zero fields take the defaults documented beside them (see Filled). Args writes it
// as the command line of 'lockbench worker', which reads it back to the same value: the one
// format a parent (lockbench run --procs, --generators docker) and its processes share.
//
// It carries no secret: passwords reach a worker in its environment (conn.Settings.Env,
// collect.ChildArgs, RefereeSession.ChildEnv), or in files named by Conn.
type WorkerSpec struct {
	// Driver is the one driver the process runs (drivers.Parse syntax).
	Driver string
	// Workload names the workload; "" is DefaultWorkload.
	Workload string
	// Config is the process's share of the workload: its own Concurrency workers and its part
	// of an open loop's Rate. Shared, Referee and Resource are not carried (see Arena,
	// Referee, Resource).
	Config workloads.Config
	// Lease is the lock lease; 0 uses the driver's default.
	Lease time.Duration
	// Topology is the deployment's shape; a zero Kind is compose.KindSingle.
	Topology compose.Spec
	// Addrs are the deployment's addresses as users write them (conn.ParseAddr), without a
	// password: at least one.
	Addrs []string
	// Conn are the connection flags: User, the password files, SentinelUser, TLS and its
	// files. Addrs, Topology and Getenv are not carried (see Addrs, Topology).
	Conn conn.Options
	// Procs is how many processes the run has, 1 to MaxProcs; 0 is 1. Index is this one's,
	// 0 to Procs-1; process 0 also measures the servers.
	Procs, Index int
	// StartAt is the common start time (zero: at once), read by Clock.
	StartAt time.Time
	// Clock is what StartAt is read by: ClockRedis or ClockLocal; "" is ClockRedis.
	Clock string
	// Output is the result file to write; "" is a new file in Out. Out is that directory;
	// "" is DefaultOut. NoResults writes no file.
	Output    string
	Out       string
	NoResults bool
	// Arena is the shared-memory checker file of the processes on this machine; "" for none.
	Arena string
	// Net is the network conditions the process puts on its connections (netem syntax);
	// FleetNet those of the whole run, as its result records them ("" is Net).
	Net, FleetNet string
	// Stalls are this process's stalls, from the start of the measured phase.
	Stalls []Stall
	// RunID is the run's id, the same for every process (collect.CheckRunID).
	RunID string
	// Collect, when its Addr is set, is the Redis the result is stored in under RunID.
	Collect Endpoint
	// Referee, when its Addr is set, is the run's safety referee; it needs RunID.
	Referee Endpoint
	// Resource is the protected resource kept on the referee (resource.Fenced, resource.Plain),
	// "" for none.
	Resource string
	// Metrics, when its Addr is set, is where the process serves its Prometheus metrics.
	Metrics WorkerMetrics
	// CPUProfile and Trace profile the process itself (pprof, go tool trace); "" for none.
	CPUProfile, Trace string
}

// Stall is one stall of a process's lock holders: the workers holding a lock At after the
// measured phase began keep it until At+For.
type Stall struct {
	At, For time.Duration
}

// String is the stall as the worker's --stall takes it: AT+FOR.
func (s Stall) String() string { return s.At.String() + "+" + s.For.String() }

// Endpoint is a Redis a worker reaches apart from the deployment: the address as users write
// it, without a password, and the CA of its certificate ("" for the system's roots).
type Endpoint struct {
	Addr, CAFile string
}

// WorkerMetrics is where a worker serves its Prometheus metrics and the labels a parent gives
// them. A zero Addr serves none.
type WorkerMetrics struct {
	Addr string
	// RunID is the run_id label, the parent's; "" is a random one.
	RunID string
	// Round is the round label; 0 is 1.
	Round int
	// Linger keeps serving this long after the run.
	Linger time.Duration
}

// Filled returns w with every default spelled out, as a worker reads Args back: the workload,
// Procs, Clock, Out, the metrics' Round and the Config's defaults (workloads.Config.Fill), with
// an explicit "none" (no warm-up, no reads) kept as -1, since 0 there means the default.
func (w WorkerSpec) Filled() WorkerSpec {
	if w.Workload == "" {
		w.Workload = DefaultWorkload
	}
	if w.Topology.Kind == "" {
		w.Topology.Kind = compose.KindSingle
	}
	w.Procs = max(w.Procs, 1)
	if w.Clock == "" {
		w.Clock = ClockRedis
	}
	if w.Out == "" {
		w.Out = DefaultOut
	}
	if w.Metrics.Round == 0 {
		w.Metrics.Round = 1
	}
	w.Config = explicit(w.Config)
	w.Conn.Addrs, w.Conn.Topology, w.Conn.Getenv = nil, "", nil
	return w
}

// explicit fills cfg, keeping "none" distinct from "default": Fill turns a warm-up or read
// ratio of -1 into 0, which the flags read back as the default.
func explicit(cfg workloads.Config) workloads.Config {
	cfg.Shared, cfg.Referee, cfg.Resource = nil, nil, nil
	cfg.Fill()
	if cfg.Warmup == 0 {
		cfg.Warmup = -1
	}
	if cfg.ReadRatio == 0 {
		cfg.ReadRatio = -1
	}
	return cfg
}

// Args returns w as the arguments of lockbench (the command name first): every setting of
// Filled spelled out, so that the process runs exactly this configuration and applies no
// defaults of its own; optional settings only when set. No password is among them.
func (w WorkerSpec) Args() []string {
	w = w.Filled()
	cfg := w.Config
	dur := func(d time.Duration) string { return d.String() }
	float := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	warmup, readRatio := cfg.Warmup, cfg.ReadRatio
	if warmup < 0 {
		warmup = 0 // explicit 0s: no warm-up
	}
	if readRatio < 0 {
		readRatio = 0 // explicit 0: writes only
	}
	args := []string{WorkerCommand,
		"--driver", w.Driver,
		"--workload", w.Workload,
		"--concurrency", strconv.Itoa(cfg.Concurrency),
		"--keys", strconv.Itoa(cfg.Keys),
		"--key-dist", cfg.KeyDist,
		"--zipf-s", float(cfg.ZipfS),
		"--hold", dur(cfg.Hold),
		"--read-ratio", float(readRatio),
		"--fanout", strconv.Itoa(cfg.Fanout),
		"--depth", strconv.Itoa(cfg.Depth),
		"--duration", dur(cfg.Duration),
		"--warmup", dur(warmup),
		"--seed", strconv.FormatInt(cfg.Seed, 10),
		"--key-prefix", cfg.KeyPrefix,
		"--lease", dur(w.Lease),
		"--topology", w.Topology.String(),
		"--addr", strings.Join(w.Addrs, ","),
		"--procs", strconv.Itoa(w.Procs),
		"--index", strconv.Itoa(w.Index),
		"--clock", w.Clock,
		"--out", w.Out,
	}
	opt := func(name, v string) {
		if v != "" {
			args = append(args, "--"+name, v)
		}
	}
	flag := func(name string, on bool) {
		if on {
			args = append(args, "--"+name)
		}
	}
	if cfg.Rate > 0 {
		args = append(args, "--rate", float(cfg.Rate), "--arrival", cfg.Arrival)
	}
	if w.Topology.Kind == compose.KindSentinel {
		opt("master-name", w.Topology.MasterName)
	}
	c := w.Conn
	opt("user", c.User)
	opt("password-file", c.PasswordFile)
	opt("sentinel-user", c.SentinelUser)
	opt("sentinel-password-file", c.SentinelPasswordFile)
	flag("tls", c.TLS)
	opt("tls-ca-file", c.CAFile)
	opt("tls-cert-file", c.CertFile)
	opt("tls-key-file", c.KeyFile)
	opt("tls-server-name", c.ServerName)
	flag("tls-insecure-skip-verify", c.InsecureSkipVerify)
	if !w.StartAt.IsZero() {
		args = append(args, "--start-at", w.StartAt.UTC().Format(time.RFC3339Nano))
	}
	opt("output", w.Output)
	flag("no-results", w.NoResults)
	opt("check-arena", w.Arena)
	opt("net", w.Net)
	opt("fleet-net", w.FleetNet)
	for _, s := range w.Stalls {
		args = append(args, "--stall", s.String())
	}
	opt("run", w.RunID)
	opt("collect", w.Collect.Addr)
	opt("collect-ca-file", w.Collect.CAFile)
	opt("referee", w.Referee.Addr)
	opt("referee-ca-file", w.Referee.CAFile)
	opt("resource", w.Resource)
	if m := w.Metrics; m.Addr != "" {
		args = append(args, "--metrics-addr", m.Addr, "--metrics-round", strconv.Itoa(m.Round))
		opt("metrics-run-id", m.RunID)
		if m.Linger != 0 {
			args = append(args, "--metrics-linger", dur(m.Linger))
		}
	}
	opt("cpuprofile", w.CPUProfile)
	opt("trace", w.Trace)
	return args
}

// Validate returns what is wrong with w, as an error wrapping ErrBadSpec, or nil: the process's
// place in the run, its clock, its stalls (as lockbench run checks --fault stall:genN, this
// process being gen Index+1), the deployment's addresses, and the driver, workload and
// configuration as Spec.Validate checks them. The messages name the lockbench worker flags that
// set each field.
func (w WorkerSpec) Validate() error {
	w = w.Filled()
	switch {
	case w.Procs > MaxProcs:
		return bad("--procs %d: want 1 to %d", w.Procs, MaxProcs)
	case w.Clock != ClockRedis && w.Clock != ClockLocal:
		return bad("--clock %q: want %s or %s", w.Clock, ClockRedis, ClockLocal)
	case w.Index < 0 || w.Index >= w.Procs:
		return bad("--index %d: want 0 to %d (--procs %d)", w.Index, w.Procs-1, w.Procs)
	case len(w.Addrs) == 0:
		return bad("a worker attaches to a running deployment: give its --addr (and --topology)")
	case w.Referee.Addr != "" && w.RunID == "":
		return bad("--referee needs --run ID: every process of the run marks its holders under the run's id")
	case w.Collect.Addr != "" && w.RunID == "":
		return bad("--collect needs --run ID: the id every worker of the run shares, for lockbench merge --from ADDR --run ID")
	case w.Resource != "" && w.Referee.Addr == "":
		return bad("--resource needs --referee ADDR: the resource is kept on the run's referee")
	}
	if fs := w.stallFaults(); len(fs) > 0 {
		if err := faults.Validate(fs, faults.Layout{Procs: w.Procs, Duration: w.Config.Duration}); err != nil {
			return bad("--stall: %v", err)
		}
	}
	return Spec{Drivers: []string{w.Driver}, Workload: w.Workload, Config: w.Config, Lease: w.Lease}.Validate()
}

// stallFaults are w's stalls as the faults lockbench run gives generator Index+1.
func (w WorkerSpec) stallFaults() []faults.Fault {
	var out []faults.Fault
	node := faults.Node{Role: faults.RoleGen, N: w.Index + 1}
	for _, s := range w.Stalls {
		out = append(out, faults.Fault{Spec: fmt.Sprintf("%s:%s@%s", faults.Stall, node, s), Action: faults.Stall, Node: node, At: s.At, For: s.For})
	}
	return out
}

// ForWorker returns what in s, a session as run's flags make it, one worker process (lockbench
// worker) does not do, as an error wrapping ErrBadSpec, or nil: a worker runs one driver, once,
// checks no threshold, and attaches to a running deployment (starts: the command line asks it
// to start one, with --provider or --image).
func (s Spec) ForWorker(starts bool) error {
	switch {
	case len(s.Drivers) != 1:
		return bad("a worker runs one driver, not %d (--driver %s): start one set of workers per driver", len(s.Drivers), strings.Join(s.Drivers, ","))
	case s.Repeat != 1:
		return bad("a worker runs once: start the workers again to repeat (--repeat is for lockbench run)")
	case len(s.Thresholds) > 0:
		return bad("--threshold is checked by lockbench run or on the merged file (lockbench compare), not by a worker")
	case starts:
		return bad("a worker attaches to a running deployment (--addr); --provider and --image are for lockbench run")
	}
	return nil
}
