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
	spec := f.deploy.Spec()
	spec.Net, spec.Log, spec.OnStart = f.net.Conditions, ui.Line, onStart
	spec.OnConnected = func() (err error) {
		rt.unpin, err = applyPin(&f.pin, ui)
		return err
	}
	if f.deploy.Attached() {
		for _, w := range spec.Attach.Warnings() {
			ui.Line("warning: %s", w)
		}
	} else {
		spec.Native.CPUs = f.pin.Server
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
