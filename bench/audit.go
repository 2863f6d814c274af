package bench

import (
	"context"

	"github.com/lockbench/lockbench/audit"
	"github.com/lockbench/lockbench/keyspace"
	"github.com/lockbench/lockbench/results"
)

// auditRun scans every master for what run left behind and records it in run.Audit. Leftovers
// count as errors of the kind "leftover_keys", so they fail the run (exit 1) and show in the
// errors column and in thresholds on errors. On a topology lockbench started the keyspace was
// flushed before the run, so every key is the run's and the scan matches everything; on an
// attached deployment it counts only keys of lockbench's exact shapes for the key prefix (package
// keyspace), never someone else's key that contains the prefix. An audit that cannot finish (a
// server down after a fault) is recorded and warned about, not counted as leftovers.
func (s *Session) auditRun(ctx context.Context, run *results.Run) {
	scope := audit.All
	if s.tgt.Attached() {
		ks := keyspace.New(s.keyPrefix(), s.declared()...)
		scope = audit.Scope{Globs: ks.Globs(), Match: ks.Owns}
	}
	var masters []audit.Master
	for _, n := range s.tgt.Masters() {
		masters = append(masters, audit.Master{Addr: n.Addr, Client: n.Client})
	}
	a, err := audit.Scan(context.WithoutCancel(ctx), masters, scope)
	run.Audit = &a
	if err != nil {
		s.rep.Line("warning: post-run audit of %s incomplete: %v", run.Driver, err)
	}
	if a.Leftovers == 0 {
		return
	}
	if run.ErrorsByKind == nil {
		run.ErrorsByKind = map[string]int64{}
	}
	run.ErrorsByKind["leftover_keys"] += a.Leftovers
	run.Errors += a.Leftovers
	for _, k := range a.Keys {
		s.rep.Line("leftover key after %s: %s on %s (%s, ttl %dms)", run.Driver, k.Key, k.Node, k.Type, k.TTLMS)
	}
}
