package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockbench/lockbench/clock"
	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/crosscheck"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// DefaultStartDelay and startDelayPerProc set how far ahead RunShared puts the common start
// time: DefaultStartDelay plus startDelayPerProc per process, long enough for N processes to
// start and connect on a loaded machine, short against a measured phase.
const (
	DefaultStartDelay = 2 * time.Second
	startDelayPerProc = 250 * time.Millisecond
)

// Shared is one run made by several generator processes on this machine that share a safety
// checker. It is a plain value.
type Shared struct {
	// Procs starts the processes; its Args is set by RunShared from WorkerArgs.
	Procs Procs
	// WorkerArgs returns process index's arguments: it must make the process wait for startAt,
	// write its result file (one run) to output, and, when arena is not empty, keep its checkers'
	// state in the crosscheck arena at that path.
	WorkerArgs func(index int, startAt time.Time, output, arena string) []string
	// Keys sizes the checker arena (the workload's number of keys).
	Keys int
	// Dir is where the processes' result files and the arena go while they run (the system's
	// temporary directory and crosscheck.DefaultDir if empty); RunShared removes them.
	Dir string
	// StartDelay is how far ahead the common start time is set (0: DefaultStartDelay and a
	// quarter second per process).
	StartDelay time.Duration
	// Now, if set, reads the clock the common start time is set by, the one WorkerArgs tells
	// the processes to wait by (the deployment's: clock.Estimate.Now); nil: time.Now.
	Now func() time.Time
	// OnStart, if set, is called with the common start time, by Now's clock, before the
	// processes start: lockbench run schedules its client faults from it.
	OnStart func(startAt time.Time)
	// Warn, if set, is told what RunShared could not do but ran without (no shared memory).
	Warn func(format string, args ...any)
	// Gather, if set, fetches the processes' results from where WorkerArgs told them to put
	// them (see package collect) in place of their result files, after every process ended,
	// and returns them merged; missing processes are then lost from the file it returns, with
	// an error wrapping collect.ErrMissing. Nil: the files at output.
	Gather func(ctx context.Context) (*results.File, error)
}

// RunShared starts the processes with a common start time and a shared crosscheck arena (when
// this platform can map one; else each process checks its own holders, and Warn says so),
// waits for them, and merges their results losslessly, one at a time (results.FileMerger), from
// their result files or from where Gather fetches them. A process that
// crashed or was killed is listed in the merged run's Fleet.Lost and makes it incomplete, named
// with how it ended. The merged violations are at least what the shared arena counted, read
// from the memory itself, so a crashed process's violations are not lost. When every process
// skipped the driver the error wraps drivers.ErrUnsupported with the reason; when none left a
// result it wraps ErrAllLost and names how each ended. It always returns every process's Exit.
// It is safe for concurrent use.
func RunShared(ctx context.Context, s Shared) (results.Run, []Exit, error) {
	warn := s.Warn
	if warn == nil {
		warn = func(string, ...any) {}
	}
	dir, err := os.MkdirTemp(s.Dir, "lockbench-procs-*")
	if err != nil {
		return results.Run{}, nil, fmt.Errorf("fleet: %w", err)
	}
	defer os.RemoveAll(dir)
	arenaDir := s.Dir
	if arenaDir == "" {
		arenaDir = crosscheck.DefaultDir()
	}
	arena, err := crosscheck.Create(arenaDir, s.Keys)
	arenaPath := ""
	if err != nil {
		warn("no cross-process safety checker (%v): each process checks its own holders only", err)
		arena = nil
	} else {
		defer arena.Remove()
		arenaPath = arena.Path()
	}
	delay := s.StartDelay
	if delay <= 0 {
		// Starting and connecting takes longer the more processes share the machine.
		delay = DefaultStartDelay + time.Duration(s.Procs.N)*startDelayPerProc
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	startAt := now().Add(delay).UTC()
	if s.OnStart != nil {
		s.OnStart(startAt)
	}
	output := func(i int) string { return filepath.Join(dir, fmt.Sprintf("proc-%d.json", i)) }
	p := s.Procs
	p.Args = func(i int) []string { return s.WorkerArgs(i, startAt, output(i), arenaPath) }
	exits := Run(ctx, p)

	var merged *results.File
	var ended []string
	if s.Gather != nil {
		merged, ended, err = gathered(ctx, s.Gather, exits)
	} else {
		merged, ended, err = mergeFiles(exits, output)
	}
	if err != nil {
		return results.Run{}, exits, err
	}
	if len(merged.Runs) == 0 {
		var skips []string
		for _, sk := range merged.Skipped {
			skips = append(skips, sk.Reason)
		}
		if len(skips) > 0 {
			return results.Run{}, exits, fmt.Errorf("%w: %s", drivers.ErrUnsupported, skips[0])
		}
		return results.Run{}, exits, fmt.Errorf("%w: %s", ErrAllLost, strings.Join(ended, "; "))
	}
	run := merged.Runs[0]
	if len(ended) > 0 && run.Incomplete != "" {
		run.Incomplete += " (" + strings.Join(ended, "; ") + ")"
	}
	if arena != nil {
		run.Fleet.SharedViolations = arena.Violations()
		run.Violations = max(run.Violations, run.Fleet.SharedViolations)
	} else {
		run.Fleet.CrossProcessChecker = false
	}
	return run, exits, nil
}

// mergeFiles merges the processes' result files one at a time, and says how the processes
// that left none ended.
func mergeFiles(exits []Exit, output func(int) string) (*results.File, []string, error) {
	g := results.NewFileMerger("", nil)
	var ended []string
	for _, e := range exits {
		f, err := results.ReadFile(output(e.Index))
		switch {
		case err != nil && errors.Is(err, os.ErrNotExist):
			ended = append(ended, e.String())
			continue
		case err != nil:
			ended = append(ended, fmt.Sprintf("%s; its result: %v", e, err))
			continue
		case len(f.Runs) > 1 || len(f.Runs) == 0 && len(f.Skipped) == 0:
			ended = append(ended, fmt.Sprintf("%s with %d runs in its result", e, len(f.Runs)))
			continue
		}
		if err := g.Add(f); err != nil {
			return nil, nil, err
		}
	}
	if g.Files() == 0 {
		return &results.File{}, ended, nil
	}
	f, err := g.File()
	return f, ended, err
}

// gatherTimeout bounds fetching the results once the processes have ended, also after an
// interrupt: what they measured is fetched even then.
const gatherTimeout = time.Minute

// gathered fetches the merged results with gather, and says how the processes that left none
// ended.
func gathered(ctx context.Context, gather func(context.Context) (*results.File, error), exits []Exit) (*results.File, []string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gatherTimeout)
	defer cancel()
	f, err := gather(ctx)
	if err != nil && f == nil {
		if errors.Is(err, collect.ErrMissing) {
			// None stored a result: say how each ended.
			var ended []string
			for _, e := range exits {
				ended = append(ended, e.String())
			}
			return &results.File{}, ended, nil
		}
		return nil, nil, err
	}
	var ended []string
	if len(f.Runs) == 1 && f.Runs[0].Fleet != nil {
		for _, i := range f.Runs[0].Fleet.Lost {
			if i < len(exits) {
				ended = append(ended, exits[i].String())
			}
		}
	}
	return f, ended, nil
}

// Worker is what makes a workloads.Plan one process's share of a run of several.
type Worker struct {
	// Index is this process's index, 0 to Procs-1; Procs how many processes the run has.
	Index, Procs int
	// StartAt is the common start time (zero: at once).
	StartAt time.Time
	// Arena is the path of the crosscheck arena the processes of this machine share; empty: the
	// checkers see this process's holders only (processes on several machines).
	Arena string
	// Clock, when set, is this process's estimate of the deployment's clock, and StartAt is by
	// that clock: Work waits until the deployment's clock shows StartAt, and records the estimate
	// and how far from StartAt the warm-up began (results.ClockSync). ClockSource names the node
	// it was read from. Nil: StartAt is by this machine's clock.
	Clock       *clock.Estimate
	ClockSource string
	// Referee, when set, is told of every holder inside its critical section (package
	// referee), and its count is the run's Referee; nil: no referee.
	Referee Referee
	// Resource, when set, is written by every holder (package resource), and what it saw is the
	// run's Resource; nil: none.
	Resource workloads.Resource
}

// Referee is a safety referee as Work uses it: the checkers' workloads.Referee, and what it saw.
type Referee interface {
	workloads.Referee
	Result() *results.Referee
}

// seedStride sets processes' seeds apart: process i draws keys with seed+i·seedStride, so that
// processes do not repeat each other's key sequences (each worker's sequence is a stream of its
// process's seed) and equal seeds still give equal runs.
const seedStride = 1_000_003

// Work runs plan as process w.Index of w.Procs: it waits for the common start time after
// connecting, keeps the checkers' state in the shared arena when there is one, draws its own
// key sequence, and returns the run marked with its process (results.Run.SetProcess), the seed
// reported as the run's, not the process's. Errors are workloads.Run's, or the arena's, which
// wrap crosscheck.ErrBadArena for a file that is not one. It is safe for concurrent use.
func Work(ctx context.Context, plan workloads.Plan, w Worker) (results.Run, error) {
	seed := plan.Config.Seed
	if seed == 0 {
		seed = workloads.DefaultSeed
	}
	plan.Config.Seed = seed + int64(w.Index)*seedStride
	plan.StartAt = w.StartAt
	if w.Clock != nil && !w.StartAt.IsZero() {
		plan.StartAt = w.Clock.Local(w.StartAt)
	}
	if w.Referee != nil {
		plan.Config.Referee = w.Referee
	}
	if w.Resource != nil {
		plan.Config.Resource = w.Resource
	}
	if w.Arena != "" {
		cfg := plan.Config
		cfg.Fill()
		a, err := crosscheck.Open(w.Arena, cfg.Keys)
		if err != nil {
			return results.Run{}, err
		}
		defer a.Close()
		plan.Config.Shared = a.Shared()
	}
	run, err := workloads.Run(ctx, plan)
	run.Seed = seed
	if err != nil {
		return run, err
	}
	if w.Referee != nil {
		run.Referee = w.Referee.Result()
		run.Violations = max(run.Violations, run.Referee.Violations)
	}
	host, _ := os.Hostname()
	run.SetProcess(w.Index, w.Procs, w.StartAt, host, os.Getpid(), w.Arena != "")
	if c := w.Clock; c != nil {
		run.SetClock(w.ClockSource, c.Offset, c.RTT, c.Samples, c.Server(run.StartedAt))
	}
	return run, nil
}
