package main

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/pin"
	"github.com/lockbench/lockbench/progress"
	"github.com/lockbench/lockbench/results"
	"github.com/spf13/pflag"
)

// pinFlags are --pin, --server-cpus and --client-cpus (run and sweep): where the servers
// lockbench starts and lockbench itself run. check has bench.PlaceRequest parse the lists and
// decide the placement; apply places the client (the servers are placed as they start, through compose).
type pinFlags struct {
	mode                   string
	serverList, clientList string
	server, client         pin.CPUs
	placement              *results.Placement
}

func (p *pinFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&p.mode, "pin", bench.PinAuto, "CPU placement of the servers lockbench starts and of lockbench itself: auto (on a machine with 2 or more CPUs, the servers on the highest-numbered CPUs — one per master, at most half — and lockbench with its generator processes on the rest, GOMAXPROCS set to their count) or off (the scheduler decides; client and server then compete for the same cores)")
	fs.StringVar(&p.serverList, "server-cpus", "", "CPUs for the redis-server processes lockbench starts (taskset list: 1, 2-3, 1,3); not with --addr, whose servers lockbench does not own")
	fs.StringVar(&p.clientList, "client-cpus", "", "CPUs for lockbench and its generator processes (taskset list); GOMAXPROCS is set to their count")
}

// check parses the lists and decides the placement of spec's servers (none of them
// lockbench's when attached) with bench.PlaceRequest; it returns what is wrong, or "".
func (p *pinFlags) check(fs *pflag.FlagSet, spec compose.Spec, attached bool) string {
	r := bench.PlaceRequest{Mode: p.mode, Server: p.serverList, Client: p.clientList, Given: fs.Changed}
	var err error
	if p.server, p.client, p.placement, err = r.Resolve(spec, attached); err != nil {
		return err.Error()
	}
	return ""
}

// apply places lockbench itself (all its threads, and the processes it forks from now on) and
// returns what undoes it. It says where everything runs, and warns when client and server
// share CPUs.
func (p *pinFlags) apply(ui *progress.UI) (restore func(), err error) {
	restore, err = pin.Self(p.client)
	if err != nil {
		if errors.Is(err, pin.ErrUnsupported) {
			return func() {}, nil
		}
		return nil, fmt.Errorf("--client-cpus %s: %w", p.client, err)
	}
	if pl := p.placement; pl != nil {
		pl.GOMAXPROCS = runtime.GOMAXPROCS(0)
		if pl.Shared {
			ui.Line("warning: %s", pl)
		} else {
			ui.Line("%s", pl)
		}
	}
	return restore, nil
}
