package main

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/pin"
	"github.com/lockbench/lockbench/progress"
)

// applyPin places lockbench itself where p, checked, says (all its threads, and the processes
// it forks from now on) and returns what undoes it: a process-wide effect, so cmd's. It says
// where everything runs, and warns when client and server share CPUs.
func applyPin(p *bench.PinFlags, ui *progress.UI) (restore func(), err error) {
	restore, err = pin.Self(p.Client)
	if err != nil {
		if errors.Is(err, pin.ErrUnsupported) {
			return func() {}, nil
		}
		return nil, fmt.Errorf("--client-cpus %s: %w", p.Client, err)
	}
	if pl := p.Placement; pl != nil {
		pl.GOMAXPROCS = runtime.GOMAXPROCS(0)
		if pl.Shared {
			ui.Line("warning: %s", pl)
		} else {
			ui.Line("%s", pl)
		}
	}
	return restore, nil
}
