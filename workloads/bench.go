package workloads

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Plan is one workload run on one driver.
type Plan struct {
	Workload Workload
	Config   Config
	Driver   drivers.Driver
	Target   drivers.Config
	// ServerStats snapshots every server of the topology (INFO commandstats and cpu per node);
	// the delta over the measured phase gives commands and server CPU per acquisition and the
	// per-node breakdown. It takes precedence over CommandStats. Nil leaves them unmeasured.
	ServerStats func(ctx context.Context) (results.ServerStats, error)
	// CommandStats snapshots one server's INFO commandstats, for callers that measure a single
	// server and no CPU; used only when ServerStats is nil.
	CommandStats func(ctx context.Context) (results.CommandStats, error)
	// Progress, if set, is called about once a second during each phase.
	Progress func(Progress)
	// StartAt, if set, is when the warm-up starts, after the driver has connected: several
	// processes given one StartAt load the server together (lockbench run --procs, lockbench
	// worker). Zero: at once.
	StartAt time.Time
	// Measure, if set, is called as the measured phase starts, with its start (the timeline's),
	// and returns a function called once the phase's workers have stopped: lockbench run
	// schedules its faults (--fault) with it.
	Measure func(start time.Time) (end func())
	// Grants, if set, is told of every grant of the measured phase (see results.GrantWatch).
	Grants *results.GrantWatch
	// Stalls are windows of the measured phase in which the workers holding a lock at the
	// window's start keep it until its end (see Stall); Run records each in results.Run.Faults.
	// They must not overlap, and must end inside the phase.
	Stalls []Stall
	// TimelineInterval is the length of a timeline point; 0 means
	// results.DefaultTimelineInterval.
	TimelineInterval time.Duration
	// Live, if set, is called with the measured phase so far after every timeline interval,
	// from the timeline's goroutine, and once more when the run is filled (Live.Final). A
	// non-empty answer before the end stops the phase at once: the run is returned with what
	// was measured, incomplete, with the answer as its Aborted reason. It must return promptly.
	Live func(Live) (abort string)
}

// Progress is a running phase's state, for progress output.
type Progress struct {
	Driver       string
	Phase        string // "warmup" or "measure"
	Elapsed      time.Duration
	Planned      time.Duration
	Acquisitions int64
}

// Run executes the plan: open a fresh client, warm up unrecorded, measure, close. An interrupted
// run (ctx ended) still returns what was measured, with Complete false. The error is for runs
// that could not start: bad config (wrapping ErrBadConfig), a driver that cannot run this
// workload or topology (wrapping drivers.ErrUnsupported: skip it), a driver that cannot connect.
func Run(ctx context.Context, p Plan) (results.Run, error) {
	cfg := p.Config
	cfg.Fill()
	run := results.Run{
		Driver:      p.Driver.Name(),
		Workload:    p.Workload.Name(),
		Topology:    p.Target.Topology,
		Addrs:       p.Target.Addrs,
		Concurrency: cfg.Concurrency,
		Keys:        cfg.Keys,
		KeyDist:     cfg.KeyDist,
		HoldUS:      float64(cfg.Hold) / float64(time.Microsecond),
		Seed:        cfg.Seed,
		WarmupS:     cfg.Warmup.Seconds(),
		StartedAt:   time.Now().UTC(),
	}
	setPacing(&run, &cfg)
	run.Checkers = cfg.checkers()
	if err := CheckConfig(p.Workload, cfg); err != nil {
		return run, err
	}
	if err := checkStalls(p.Stalls, cfg.Duration); err != nil {
		return run, err
	}
	if !p.Driver.Kinds().Has(p.Workload.Needs()) {
		// A combination to skip, not a failure: callers check drivers.ErrUnsupported.
		return run, fmt.Errorf("%w: driver %s cannot run workload %s: it needs %v locks, the driver has %v",
			drivers.ErrUnsupported, p.Driver.Name(), p.Workload.Name(), p.Workload.Needs(), p.Driver.Kinds())
	}
	target := p.Target
	target.Concurrency = cfg.Concurrency
	// Drivers whose lock kinds share key layouts (a Mutex and an RWMutex) pick the lock by it.
	target.Needs = p.Workload.Needs()
	locker, err := p.Driver.Open(ctx, target)
	if err != nil {
		return run, fmt.Errorf("driver %s: %w", p.Driver.Name(), err)
	}
	defer locker.Close()
	run.DriverSettings = locker.Settings()
	if !waitUntil(ctx, p.StartAt) {
		run.Incomplete = "interrupted before the common start time"
		return run, run.Fill(results.Merge(), 0)
	}
	if !p.StartAt.IsZero() {
		run.StartedAt = time.Now().UTC()
	}

	// Releases outlive the phase by a grace period, so a run that ends mid-cycle gives its locks
	// back, but a dead server cannot hold the run hostage.
	release, cancelRelease := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRelease()
	stopGrace := context.AfterFunc(ctx, func() {
		time.AfterFunc(DefaultReleaseTimeout, cancelRelease)
	})
	defer stopGrace()

	if len(p.Stalls) > 0 {
		cfg.stall = newStallGate(p.Stalls)
	}
	inst := p.Workload.Start(&cfg)
	cyclers := make([]Cycler, cfg.Concurrency)
	for i := range cyclers {
		cyclers[i] = inst.NewCycler(i, locker.NewWorker(), release)
	}
	loop := newPacer(&cfg, cyclers)

	if cfg.Warmup > 0 {
		ph := loop.NewPhase(false)
		watch(p, ph, "warmup", cfg.Warmup, func() { loop.Run(ctx, ph, cfg.Warmup) })
		if ph.Interrupted {
			recordSafety(&run, inst)
			run.Incomplete = "interrupted during warm-up"
			return run, run.Fill(results.Merge(), 0)
		}
	}

	stats := p.snapshotter()
	before, statsErr := stats(ctx)
	// The grace also counts from the end of the measured phase, not only from an interrupt:
	// a caller's ctx may never end, and releases stuck on a stalled server must not keep the
	// run going past phase + grace. (Warm-up releases are bounded by the clients' timeouts.)
	graceTimer := time.AfterFunc(cfg.Duration+DefaultReleaseTimeout, cancelRelease)
	defer graceTimer.Stop()
	ph := loop.NewPhase(true)
	counting, _ := locker.(drivers.CountingLocker)
	var countsBefore drivers.Counters
	if counting != nil {
		countsBefore = counting.Counters()
	}
	waiting, _ := locker.(drivers.WaitCountingLocker)
	var waitBefore drivers.WaitStats
	if waiting != nil {
		waitBefore = waiting.WaitStats()
	}
	renewalsBefore := renewalCount(locker)
	timeline := results.NewTimelineRecorder(ph.Recorders, p.TimelineInterval)
	phaseCtx, abortPhase := context.WithCancelCause(ctx)
	defer abortPhase(nil)
	var live *liveWatch
	if p.Live != nil {
		live = startLive(ctx, p, inst, ph, counting, countsBefore, timeline, stats, before, statsErr == nil, abortPhase)
	}
	if p.Grants != nil {
		for _, r := range ph.Recorders {
			if r != nil {
				r.Watch(p.Grants)
			}
		}
	}
	cpuBefore, extBefore, cpuOK := clientCPU(locker)
	timeline.Start()
	if cfg.stall != nil {
		cfg.stall.arm(timeline.Started()) // the faults' clock (Measure below)
	}
	endMeasure := func() {}
	if p.Measure != nil {
		endMeasure = p.Measure(timeline.Started())
	}
	watch(p, ph, "measure", cfg.Duration, func() { loop.Run(phaseCtx, ph, cfg.Duration) })
	endMeasure()
	tl, tlErr := timeline.Stop() // the workers have stopped: the points add up to the run
	if live != nil {
		live.stopPolling()
	}
	if cpuAfter, extAfter, ok := clientCPU(locker); ok && cpuOK {
		run.SetClientCPU(cpuAfter - cpuBefore)
		if _, isExt := locker.(drivers.CPULocker); isExt {
			run.SetAdapterCPU(extAfter - extBefore)
		}
	}
	if err := errors.Join(run.Fill(results.Merge(ph.Recorders...), ph.Elapsed), tlErr); err != nil {
		return run, err
	}
	if counting != nil {
		// A driver that counted nothing does not count this lock kind (fair, read-write):
		// zeros would read as "no failed attempts".
		if d := counting.Counters().Sub(countsBefore); d.Attempts > 0 || d.LocalHandoffs > 0 {
			run.SetDriverCounts(d.Attempts, d.FailedAttempts, d.LocalHandoffs)
		}
	}
	recordWaiting(ctx, &run, waiting, waitBefore)
	run.Timeline = tl
	recordPacing(&run, &cfg, ph)
	run.SetWorkerFairness(results.WorkerAcquisitions(ph.Recorders))
	recordSafety(&run, inst)
	recordFairness(&run, ph.Recorders, inst)
	recordHolds(&run, inst, renewalsDelta(renewalsBefore, renewalCount(locker)))
	if cfg.stall != nil {
		cfg.stall.record(&run, ph.Elapsed)
	}
	run.Complete = !ph.Interrupted
	switch {
	case ph.Interrupted && ctx.Err() == nil && context.Cause(phaseCtx) == errAborted:
		run.Aborted = live.reason
		run.Incomplete = fmt.Sprintf("aborted after %.1fs of %v: %s", ph.Elapsed.Seconds(), cfg.Duration, live.reason)
	case ph.Interrupted:
		run.Incomplete = fmt.Sprintf("interrupted after %.1fs of %v", ph.Elapsed.Seconds(), cfg.Duration)
	}
	if statsErr == nil {
		// Read the servers even when interrupted: the counts are part of what was measured.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		after, err := stats(sctx)
		cancel()
		if err == nil {
			after.record(&run, before)
		}
	}
	if live != nil {
		live.final(&run)
	}
	return run, nil
}

// recordSafety sets the run's safety figures from inst's checkers. They cover the warm-up too:
// the checkers see every cycle, recorded or not.
func recordSafety(run *results.Run, inst Instance) {
	run.Violations = inst.Violations()
	if sr, ok := inst.(SafetyReporter); ok {
		s := sr.Safety()
		run.FencingViolations, run.MaxConcurrentReaders = s.FencingViolations, s.MaxReaders
	}
	if rr, ok := inst.(ResourceReporter); ok {
		run.Resource = rr.Resource()
	}
}

// snapshot is one reading of the servers, by whichever of the plan's functions is set.
type snapshot struct {
	servers  results.ServerStats
	commands results.CommandStats
}

// errUnmeasured stands for "the plan measures no server": there is nothing to subtract.
var errUnmeasured = errors.New("workloads: no server stats")

func (p Plan) snapshotter() func(context.Context) (snapshot, error) {
	switch {
	case p.ServerStats != nil:
		return func(ctx context.Context) (snapshot, error) {
			s, err := p.ServerStats(ctx)
			return snapshot{servers: s}, err
		}
	case p.CommandStats != nil:
		return func(ctx context.Context) (snapshot, error) {
			s, err := p.CommandStats(ctx)
			return snapshot{commands: s}, err
		}
	}
	return func(context.Context) (snapshot, error) { return snapshot{}, errUnmeasured }
}

// record sets the run's server figures from the delta between before and s.
func (s snapshot) record(run *results.Run, before snapshot) {
	if s.servers != nil {
		run.SetServerStats(s.servers.Sub(before.servers))
		return
	}
	run.SetCommands(s.commands.Sub(before.commands))
}

// watch runs fn and reports progress once a second meanwhile.
func watch(p Plan, ph *Phase, name string, planned time.Duration, fn func()) {
	if p.Progress == nil {
		fn()
		return
	}
	start := time.Now()
	stop := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.Progress(Progress{Driver: p.Driver.Name(), Phase: name, Elapsed: time.Since(start), Planned: planned, Acquisitions: ph.Done()})
			}
		}
	}()
	fn()
	close(stop)
	<-exited
}

// recordWaiting records the driver's pub/sub waiting over the measured phase, if it counts it.
// The channels still subscribed are read once the unsubscribes of the stopped workers have had
// up to results.WaitSettle to go through.
func recordWaiting(ctx context.Context, run *results.Run, l drivers.WaitCountingLocker, before drivers.WaitStats) {
	if l == nil {
		return
	}
	d := l.WaitStats().Sub(before)
	settle := time.NewTimer(results.WaitSettle)
	defer settle.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	channels := d.Channels
settling:
	for channels > 0 {
		select {
		case <-settle.C:
			break settling
		case <-ctx.Done():
			break settling
		case <-tick.C:
			channels = l.WaitStats().Channels
		}
	}
	run.SetWaiting(results.WaitCounts{
		Subscribes: d.Subscribes, Unsubscribes: d.Unsubscribes, PeakChannels: d.PeakChannels, ChannelsAfter: channels,
		WokenByMessage: d.WokenByMessage, EndedWithoutWake: d.EndedWithoutWake, SubscribeTimeouts: d.SubscribeTimeouts,
	})
	// A refused subscription slows the waiters (they poll at the TTL) but fails no Lock: counted
	// here, or it goes unreported (issue 36).
	run.AddError(KindSubscribe, d.SubscribeRefusals, d.SubscribeRefusal)
}
