package main

import (
	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/referee"
	"github.com/spf13/pflag"
)

// refereeOff is run's --referee value for none, where an exec: driver would get one by default:
// to measure the pipe alone (the referee adds two round trips per acquisition).
const refereeOff = "off"

// refereeFlags are --referee and --referee-ca-file (run and worker): the safety referee every
// holder marks its critical section on (bench.StartReferee).
type refereeFlags struct {
	addr   string
	caFile string
}

// add registers the group's flags for cmd (run or worker).
func (g *refereeFlags) add(fs *pflag.FlagSet, cmd string) {
	if cmd == cmdRun {
		fs.StringVar(&g.addr, "referee", "", "safety referee: a Redis that is not the one under test (host:port, redis://, rediss://; password in the URL or "+referee.EnvPassword+"), or 'native' for one lockbench starts (the default with exec: drivers; 'off' for none); every holder, in every process, marks its critical section there, and a second holder is a violation named with both (see docs/procs.md)")
	} else {
		fs.StringVar(&g.addr, "referee", "", "safety referee every holder marks its critical section on (what lockbench run --referee gives its processes); needs --run")
	}
	fs.StringVar(&g.caFile, "referee-ca-file", "", "with --referee rediss://: the CA that signed the referee's certificate")
}

// check returns what is wrong with the group's flags for cmd, or "". A worker's --referee
// without --run is bench.WorkerSpec.Validate's, checked before.
func (g *refereeFlags) check(cmd string) string {
	switch {
	case g.addr == "" && g.caFile != "":
		return "--referee-ca-file needs --referee"
	case g.addr == "":
		return ""
	case g.addr == bench.NativeReferee && cmd != cmdRun:
		return "--referee native: a worker uses the run's referee; give its address"
	case g.addr == bench.NativeReferee:
		return ""
	}
	if _, err := referee.Settings(referee.Options{Addr: g.addr, CAFile: g.caFile}); err != nil {
		return "--referee: " + err.Error()
	}
	return ""
}

// defaultFor gives lockbench run a native referee when an external driver (exec:) runs and no
// referee is named: lockbench does not trust an adapter's word that it holds a lock, and the
// referee marks holders between the grant received and the release sent, inside the adapter's
// real hold (docs/external-drivers.md). --referee off turns it off (run only: else the
// complaint).
func (g *refereeFlags) defaultFor(cmd string, drivers []string) string {
	if g.addr == refereeOff {
		if cmd != cmdRun {
			return "--referee off is lockbench run's: a worker uses the run's referee, if any"
		}
		g.addr = ""
		return ""
	}
	if cmd == cmdRun && g.addr == "" && extdriver.NeedsReferee(drivers) {
		g.addr = bench.NativeReferee
	}
	return ""
}
