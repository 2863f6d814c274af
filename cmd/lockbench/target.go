package main

import (
	"context"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/progress"
	"github.com/lockbench/lockbench/target"
)

// runTarget is the deployment a command drives (package target), with what lockbench did to
// its own process once the topology was up: the CPU placement (--pin, --client-cpus), which
// close puts back.
type runTarget struct {
	*target.Target
	unpin func()
}

// startTopology starts or attaches to the deployment the flags name. onStart is called with a
// started topology before anything else can fail, so a second Ctrl-C can stop it. A topology
// started with --auth or --tls keeps its connection settings (target.Target.Conn, Secure):
// drivers and generator processes connect with them through the target.
func startTopology(ctx context.Context, f *runFlags, ui *progress.UI, onStart func(compose.Topology)) (*runTarget, error) {
	rt := &runTarget{}
	spec := target.Spec{Topology: f.spec, Net: f.net.cond, Log: ui.Line, OnStart: onStart}
	spec.OnConnected = func() (err error) {
		rt.unpin, err = f.pin.apply(ui)
		return err
	}
	if len(f.addrs) > 0 {
		spec.Attach = f.conn.settings
		for _, w := range spec.Attach.Warnings() {
			ui.Line("warning: %s", w)
		}
	} else {
		spec.Provider, spec.Image = f.provider, f.image
		spec.Auth, spec.TLS = f.conn.startSecure && f.conn.auth, f.conn.startSecure && f.conn.opt.TLS
		spec.Native.CPUs = f.pin.server
		if h := f.gens.nativeHost(); h != "" {
			spec.Native.Host = h // where the generator containers reach the servers
		}
	}
	ui.Line("%s", spec.Describe())
	t, err := target.Open(ctx, spec)
	if err != nil {
		if rt.unpin != nil {
			rt.unpin()
		}
		return nil, err
	}
	rt.Target = t
	return rt, nil
}

// close closes the target (see target.Target.Close), then puts lockbench's CPU placement back.
func (t *runTarget) close() {
	t.Close()
	if t.unpin != nil {
		t.unpin()
		t.unpin = nil
	}
}
