package bench

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/fleet"
	"github.com/lockbench/lockbench/results"
)

// exitInterrupted is the exit code of a worker that was interrupted (lockbench's 130): not
// worth a line once this session was interrupted too.
const exitInterrupted = 130

// runProcs runs rm's driver as Fleet.Procs child processes of this executable against the
// target, and returns their merged run.
func (r *remote) runProcs(ctx context.Context, rm *Remote) (results.Run, error) {
	driver, rep := rm.Driver, r.rep
	exe := r.f.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return results.Run{}, fmt.Errorf("cannot find this executable to start generator processes: %w", err)
		}
	}
	cfg := r.spec.Config
	cfg.Fill()
	rep.Line("%s: %d generator processes × %d workers", driver, r.f.Procs, cfg.Concurrency)
	if r.f.CPUProfile != "" || r.f.Trace != "" {
		cpu, trace := r.profiles(driver, "N")
		rep.Line("profiles of the generator processes: %s", profileFlags(cpu, trace))
	}
	runID := collect.NewRunID()
	var storeEnv []string
	store := collect.Options{Addr: r.f.Collect.Addr, CAFile: r.f.Collect.CAFile}
	if store.Addr != "" {
		addr, env, err := collect.ChildArgs(store)
		if err != nil {
			return results.Run{}, fmt.Errorf("--collect: %w", err)
		}
		storeEnv = env
		store.Addr = addr
	}
	env, refEP, err := r.env(storeEnv)
	if err != nil {
		return results.Run{}, err
	}
	clockMode, now, local := r.clock(ctx, driver)
	children := &fleet.Children{}
	cf := r.clientFaults(ctx, rm.Faults, procClients{children}, local)
	if cf != nil {
		defer cf.wait()
	}
	addrs := r.childAddrs()
	shared := fleet.Shared{
		Procs: fleet.Procs{
			Path:     exe,
			N:        r.f.Procs,
			Stderr:   lineWriter{rep},
			Started:  func(i, pid int) { rep.Line("process %d: pid %d", i, pid) },
			Env:      env, // passwords: never on a command line
			Children: children,
		},
		WorkerArgs: func(i int, startAt time.Time, output, arena string) []string {
			w := r.worker(driver, rm.Round, i, addrs, clockMode)
			w.StartAt, w.Output, w.Arena = startAt, output, arena
			w.RunID, w.Collect, w.Referee = runID, Endpoint{Addr: store.Addr, CAFile: store.CAFile}, refEP
			if r.ref != nil {
				w.Resource = r.ref.resource
			}
			return w.Args()
		},
		Keys: cfg.Keys,
		Now:  now,
		Warn: rep.Line,
	}
	if cf != nil {
		shared.OnStart = cf.onStart
	}
	if r.f.Collect.Addr != "" {
		opt := collect.Options{Addr: r.f.Collect.Addr, CAFile: r.f.Collect.CAFile}
		rep.Line("%s: results collected on %s, run %s", driver, conn.RedactURL(opt.Addr), runID)
		shared.Gather = func(ctx context.Context) (*results.File, error) {
			return r.gather(ctx, opt, runID)
		}
	}
	run, exits, err := fleet.RunShared(ctx, shared)
	if cf != nil {
		cf.wait() // the processes have ended: nothing is left stopped
	}
	for _, e := range exits {
		if e.Err != nil && !(ctx.Err() != nil && e.Code == exitInterrupted) {
			rep.Line("%v", e)
		}
	}
	if err != nil {
		return run, err
	}
	rm.Failed = r.after(ctx, driver, runID, &run)
	run.Net = r.spec.Net
	return run, nil
}

// gather fetches and merges run runID's results from the store, then removes them: merged into
// this run's file, the store (maybe the deployment itself, which the audit scans) keeps nothing
// of the run.
func (r *remote) gather(ctx context.Context, store collect.Options, runID string) (*results.File, error) {
	file, err := collect.Fetch(ctx, store, runID, r.f.Procs, r.f.Version, nil)
	if rerr := collect.Remove(ctx, store, runID); rerr != nil {
		r.rep.Line("results of run %s left on %s until they expire: %v", runID, conn.RedactURL(store.Addr), rerr)
	}
	return file, err
}

// profileFlags are the profile flags of a process, for the progress line.
func profileFlags(cpu, trace string) string {
	s := ""
	if cpu != "" {
		s = "--cpuprofile " + cpu
	}
	if trace != "" {
		if s != "" {
			s += " "
		}
		s += "--trace " + trace
	}
	return s
}

// lineWriter lets the processes' output through a Reporter, line by line (fleet.Procs prefixes
// and splits it).
type lineWriter struct{ rep Reporter }

func (w lineWriter) Write(b []byte) (int, error) {
	s := string(b)
	if len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	w.rep.Line("%s", s)
	return len(b), nil
}
