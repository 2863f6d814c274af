package main

import (
	"fmt"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/resource"
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

// check returns what is wrong with the group's flags for cmd and workload, or "". For run
// without --referee it asks ref for a native referee, where the resource is kept.
func (g *resourceFlags) check(cmd, workload string, ref *refereeFlags) string {
	if g.kind == "" {
		return ""
	}
	if err := resource.CheckKind(g.kind); err != nil {
		return fmt.Sprintf("--resource %q: want %s or %s", g.kind, resource.Fenced, resource.Plain)
	}
	if w, err := workloads.Get(workload); err == nil && !workloads.WritesResource(w) {
		return fmt.Sprintf("--resource is for --workload contention: the holders of %s write nothing to it", workload)
	}
	if ref.addr == refereeOff {
		return "--resource lives on the referee: not with --referee off"
	}
	if ref.addr == "" && cmd == cmdRun {
		ref.addr, g.autoReferee = bench.NativeReferee, true
	}
	return "" // a worker's --resource without --referee: bench.WorkerSpec.Validate, checked before
}
