package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/crosscheck"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/fleet"
	"github.com/lockbench/lockbench/metrics"
	"github.com/lockbench/lockbench/netem"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/workloads"
)

// WorkerOptions are how a worker reports and what its result file records of the program. The
// zero value reports nothing.
type WorkerOptions struct {
	// Reporter shows progress; nil is Discard.
	Reporter Reporter
	// Version and Command are the result file's lockbench version and command line (redacted
	// by the caller).
	Version string
	Command []string
	// Image is the container image the worker runs in, as its orchestrator named it; "" for
	// none.
	Image string
}

// WorkerResult is what a worker did.
type WorkerResult struct {
	// File is the result it handed back: one run, or the driver's skip.
	File *results.File
	// Failed: the run counted errors or safety violations.
	Failed bool
}

// Attach retries: how long a worker keeps trying to reach the deployment at least, and how long
// it waits between tries.
const (
	attachRetryMin   = 10 * time.Second
	attachRetryPause = 250 * time.Millisecond
)

// storeTimeout bounds storing the result: an interrupted worker still hands back what it
// measured, but never hangs on a store that does not answer.
const storeTimeout = 30 * time.Second

// Work runs w as one generator process of a run made by several: it attaches to the deployment
// (trying again until the start time, since pods of a Job start in any order), connects the
// referee, waits for the common start, warms up, measures, and hands the result back (stored
// under the run in Collect and/or written to a file). It serves the metrics itself while it
// runs. Once ctx ends the measured phase stops and what was measured is handed back, marked
// incomplete.
//
// Errors wrap ErrBadSpec when w cannot run as given (a deployment that refuses the address or
// the credentials, a referee under test, a configuration the workload refuses, a metrics port
// in use): nothing was measured. Other errors are failures (a deployment that does not answer,
// a result that could not be handed back). A run that ran and failed is WorkerResult.Failed.
func Work(ctx context.Context, w WorkerSpec, opts WorkerOptions) (*WorkerResult, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	w = w.Filled()
	rep := opts.Reporter
	if rep == nil {
		rep = Discard
	}
	srv, err := serveWorkerMetrics(w.Metrics, rep)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	tgt, err := attachUntilStart(ctx, w, rep)
	if err != nil {
		if errors.Is(err, target.ErrBadSpec) {
			return nil, &badSpec{msg: err.Error(), cause: err}
		}
		return nil, err
	}
	defer tgt.Close()

	wl, err := workloads.Get(w.Workload)
	if err != nil {
		return nil, bad("--workload: %v", err)
	}
	drv, err := drivers.Parse(w.Driver)
	if err != nil {
		return nil, bad("--driver: %v", err)
	}
	plan := workloads.Plan{Workload: wl, Config: w.Config, Driver: drv, Target: tgt.DriverConfig(w.Lease), Progress: rep.Progress, Stalls: w.stallPlan(),
		Live: srv.live(metrics.Labels{Driver: w.Driver, Workload: w.Workload, Topology: w.Topology.String(), Round: w.Metrics.Round, Generator: w.Index})}
	if w.Index == 0 {
		// One process measures the servers: they serve all processes, whose phases the common
		// start time lines up, so the figures are the run's; added up over processes they
		// would count every command once per process.
		plan.ServerStats = tgt.ServerStats
	}
	shown := w.Config
	shown.Fill()
	rep.Line("process %d of %d: %s, %s, %d workers, %d keys; start at %v", w.Index, w.Procs, w.Driver, w.Workload, shown.Concurrency, shown.Keys, w.StartAt)
	fw, closeWorker, err := fleetWorker(ctx, w, tgt, rep)
	if err != nil {
		return nil, fmt.Errorf("--referee: %w", err)
	}
	defer closeWorker()
	run, err := fleet.Work(ctx, plan, fw)
	rep.Clear()

	res := &WorkerResult{File: results.NewFile(opts.Version, opts.Command)}
	file := res.File
	file.RedisVersion = tgt.RedisVersion(ctx)
	file.Topology = tgt.Info()
	switch {
	case errors.Is(err, drivers.ErrUnsupported):
		reason := SkipReason(w.Driver, err)
		rep.Line("skip %s on %s: %s", w.Driver, w.Topology, reason)
		file.Skipped = append(file.Skipped, results.Skip{Driver: w.Driver, Workload: w.Workload, Topology: w.Topology.String(), Reason: reason})
	case errors.Is(err, workloads.ErrBadConfig), errors.Is(err, crosscheck.ErrBadArena):
		return nil, &badSpec{msg: err.Error(), cause: err}
	case err != nil:
		return nil, err
	default:
		run.RedactSamples(tgt.Conn().Redact) // error messages leave the process redacted
		run.TopologySpec = w.Topology.String()
		run.Net = w.Net
		if w.FleetNet != "" {
			run.Net = w.FleetNet
		}
		run.Fleet.Processes[0].Net = w.Net
		run.Fleet.RunID = w.RunID
		run.Fleet.Processes[0].Version = opts.Version
		run.Fleet.Processes[0].Image = opts.Image
		file.Runs = append(file.Runs, run)
		file.Complete = run.Complete && ctx.Err() == nil
		if run.Errors > 0 || run.Violations > 0 {
			res.Failed = true
			rep.Line("lockbench worker: %d errors, %s", run.Errors, SafetySummary(&run))
		}
	}
	if err := handBack(ctx, w, file, rep); err != nil {
		return res, err
	}
	return res, nil
}

// stallPlan is w's stalls as the workload carries them out, named as lockbench run names a
// stall of generator Index+1.
func (w WorkerSpec) stallPlan() []workloads.Stall {
	var out []workloads.Stall
	for _, f := range w.stallFaults() {
		out = append(out, workloads.Stall{At: f.At, For: f.For, Node: f.Node.String(), Spec: f.Spec})
	}
	return out
}

// attachUntilStart attaches to the deployment, trying again while it does not answer, until the
// start time or for attachRetryMin, whichever is later: pods of a Job start in any order, maybe
// before Redis, and on a loaded machine a probe can time out once.
func attachUntilStart(ctx context.Context, w WorkerSpec, rep Reporter) (*target.Target, error) {
	opt := w.Conn
	opt.Addrs, opt.Topology = w.Addrs, w.Topology.Kind
	settings, err := conn.New(opt)
	if err != nil {
		return nil, &badSpec{msg: err.Error(), cause: err}
	}
	spec := target.Spec{Topology: w.Topology, Attach: settings, Log: rep.Line}
	if w.Net != "" {
		c, err := netem.Parse(w.Net)
		if err != nil {
			return nil, bad("--net: %v", err)
		}
		spec.Net = &c
	}
	for _, warn := range settings.Warnings() {
		rep.Line("warning: %s", warn)
	}
	rep.Line("attaching to the %s deployment at %s", w.Topology, settings)
	deadline := time.Now().Add(attachRetryMin)
	if w.StartAt.After(deadline) {
		deadline = w.StartAt
	}
	for {
		tgt, err := target.Open(ctx, spec)
		if err == nil || !errors.Is(err, compose.ErrUnreachable) || ctx.Err() != nil || time.Now().After(deadline) {
			return tgt, err
		}
		rep.Line("%v; trying again", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(attachRetryPause):
		}
	}
}

// fleetWorker is this process's place in the run: its index, the common start by the
// deployment's clock (ClockRedis) and the run's referee, checked apart from the deployment.
// Call closeWorker when the run is over.
func fleetWorker(ctx context.Context, w WorkerSpec, tgt *target.Target, rep Reporter) (fw fleet.Worker, closeWorker func(), err error) {
	fw = fleet.Worker{Index: w.Index, Procs: w.Procs, StartAt: w.StartAt, Arena: w.Arena}
	closeWorker = func() {}
	if w.Clock == ClockRedis && !w.StartAt.IsZero() {
		if est, source, ok := deploymentClock(ctx, tgt, rep); ok {
			fw.Clock, fw.ClockSource = &est, source
			rep.Line("%s; start at %v by it, %v from now", describeClock(est, source), w.StartAt, time.Until(est.Local(w.StartAt)).Round(time.Millisecond))
		}
	}
	if w.Referee.Addr == "" {
		return fw, closeWorker, nil
	}
	r := &Referee{ep: w.Referee, resource: w.Resource}
	proc := ProcessName(w.Index)
	if err := r.checkApart(ctx, tgt, proc); err != nil {
		return fw, closeWorker, err
	}
	ref, err := r.open(ctx, w.RunID, proc)
	if err != nil {
		return fw, closeWorker, err
	}
	fw.Referee, closeWorker = ref, ref.Close
	res, err := r.openResource(ctx, w.RunID, proc)
	if err != nil {
		ref.Close()
		return fw, func() {}, err
	}
	if res != nil {
		fw.Resource, closeWorker = res, func() { res.Close(); ref.Close() }
	}
	return fw, closeWorker, nil
}

// handBack delivers the worker's result: stored in the collection Redis (Collect), and/or
// written to Output or a new file in Out (unless NoResults, or Collect without Output: a
// container's file system may be read-only and nobody would read it).
func handBack(ctx context.Context, w WorkerSpec, file *results.File, rep Reporter) error {
	if w.Collect.Addr != "" {
		if err := storeResult(ctx, w, file); err != nil {
			return err
		}
		rep.Line("results: stored on %s under run %s", conn.RedactURL(w.Collect.Addr), w.RunID)
	}
	if w.NoResults || w.Collect.Addr != "" && w.Output == "" {
		return nil
	}
	path := w.Output
	var err error
	if path == "" {
		path, err = results.WriteFile(w.Out, file)
	} else {
		err = results.WriteFileAt(path, file)
	}
	if err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	rep.Line("results: %s", path)
	return nil
}

// storeResult stores the worker's result file in the collection Redis under its run.
func storeResult(ctx context.Context, w WorkerSpec, file *results.File) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	s, err := collect.Open(ctx, collect.Options{Addr: w.Collect.Addr, CAFile: w.Collect.CAFile})
	if err != nil {
		return fmt.Errorf("storing the result: %w", err)
	}
	defer s.Close()
	return s.Put(ctx, w.RunID, w.Index, w.Procs, file)
}
