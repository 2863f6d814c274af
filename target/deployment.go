package target

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/preflight"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// Deployment runs the preflight on every data node (package preflight) for a run of
// concurrency workers; a node that does not answer is left out, with a warning.
func (t *Target) Deployment(ctx context.Context, concurrency int) *results.Deployment {
	d := &results.Deployment{Nodes: []results.DeploymentNode{}}
	for _, n := range t.nodes {
		ctx, cancel := context.WithTimeout(ctx, InspectTimeout)
		node, err := preflight.Inspect(ctx, n.Client, n.Addr, n.Role)
		cancel()
		if err != nil {
			d.Warnings = append(d.Warnings, t.conn.Redact(err.Error()))
			continue
		}
		d.Nodes = append(d.Nodes, node)
	}
	d.Warnings = append(d.Warnings, preflight.Warnings(d.Nodes, t.spec.Kind, concurrency)...)
	if t.spec.Kind == compose.KindSentinel {
		d.Warnings = append(d.Warnings, t.SentinelWarnings(ctx)...)
	}
	return d
}

// SentinelWarnings asks each sentinel of the deployment how it monitors the master (its
// quorum); one that cannot be asked gets a warning saying so. Credentials never show in them.
func (t *Target) SentinelWarnings(ctx context.Context) []string {
	var w []string
	for _, addr := range t.topo.Addrs() {
		opt := nodeOption(addr)
		t.conn.RueidisSentinel(&opt, nil)
		c, err := rueidis.NewClient(opt)
		if err != nil {
			w = append(w, t.conn.Redact(fmt.Sprintf("%s: cannot ask the sentinel for its quorum: %v", addr, err)))
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, InspectTimeout)
		sw, err := preflight.SentinelWarnings(ctx, c, addr, t.MasterName())
		cancel()
		c.Close()
		if err != nil {
			w = append(w, t.conn.Redact(err.Error()))
		}
		w = append(w, sw...)
	}
	return w
}
