package main

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/resource"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
	"github.com/spf13/pflag"
)

// resourceFlags is --resource (run and worker): the protected resource every holder writes to,
// kept on the referee (package resource).
type resourceFlags struct {
	kind string
	// autoReferee: run had no --referee, and starts a native one to keep the resource on.
	autoReferee bool
}

// add registers the group's flags for cmd (run or worker).
func (g *resourceFlags) add(fs *pflag.FlagSet, cmd string) {
	if cmd == cmdRun {
		fs.StringVar(&g.kind, "resource", "", "protected resource every holder writes to as its hold starts and ends, kept on the referee (a native one is started without --referee): fenced (rejects a fencing token below the highest it accepted) or plain (accepts every write); the result counts corrupt writes, stale writes rejected and leases lost at release, for --workload contention (see docs/protected-resource.md)")
	} else {
		fs.StringVar(&g.kind, "resource", "", "protected resource every holder writes to, fenced or plain (what lockbench run --resource gives its processes); needs --referee")
	}
}

// check returns what is wrong with the group's flags, or "". For run without --referee it asks
// for a native referee, where the resource is kept.
func (g *resourceFlags) check(f *runFlags, cmd string) string {
	if g.kind == "" {
		return ""
	}
	if err := resource.CheckKind(g.kind); err != nil {
		return fmt.Sprintf("--resource %q: want %s or %s", g.kind, resource.Fenced, resource.Plain)
	}
	if w, err := workloads.Get(f.workload); err == nil && !workloads.WritesResource(w) {
		return fmt.Sprintf("--resource is for --workload contention: the holders of %s write nothing to it", f.workload)
	}
	switch {
	case f.referee.addr != "":
	case cmd == cmdRun:
		f.referee.addr, g.autoReferee = refereeNative, true
	default:
		return "--resource needs --referee ADDR: the resource is kept on the run's referee"
	}
	return ""
}

// openResource connects process proc of run runID to the resource on s's referee, or returns
// nil when the run has none.
func (s *refereeSession) openResource(ctx context.Context, runID, proc string) (*resource.Resource, error) {
	if s == nil || s.resource == "" {
		return nil, nil
	}
	return resource.Open(ctx, resource.Options{Kind: s.resource, Referee: s.flags.options(runID, proc)})
}

// settleResource reads the run's corrupt and stale writes from the resource itself (every
// process's, a crashed one's too) into run, and clears the run's resource.
func (s *refereeSession) settleResource(ctx context.Context, runID string, keys int, run *results.Run, ui *progressUI) {
	res, err := s.openResource(ctx, runID, "parent")
	if res == nil || err != nil {
		if err != nil {
			ui.line("resource: %v", err)
		}
		return
	}
	defer res.Close()
	corrupt, stale, err := res.RunCounts(ctx)
	if err != nil {
		ui.line("resource: %v", err)
		return
	}
	if run.Resource == nil {
		run.Resource = &results.Resource{Kind: s.resource}
	}
	r := run.Resource
	r.CorruptWrites = max(r.CorruptWrites, corrupt)
	r.StaleRejected = max(r.StaleRejected, stale)
	ui.line("resource %s: %s: %d corrupt writes, %d stale writes rejected, %d leases lost at release (tokens: %s)",
		r.Kind, run.Driver, r.CorruptWrites, r.StaleRejected, r.LeasesLostAtRelease, r.Tokens())
	if err := res.Clear(ctx, keys); err != nil {
		ui.line("resource: run %s's state left until it expires: %v", runID, err)
	}
}
