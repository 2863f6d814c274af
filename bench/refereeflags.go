package bench

import (
	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/pin"
	"github.com/lockbench/lockbench/referee"
	"github.com/lockbench/lockbench/resource"
	"github.com/lockbench/lockbench/workloads"
	"github.com/spf13/pflag"
)

// RefereeOff is run's --referee value for none, where an exec: driver would get one by default:
// to measure the pipe alone (the referee adds two round trips per acquisition).
const RefereeOff = "off"

// RefereeFlags are --referee and --referee-ca-file (lockbench run and worker): the safety
// referee every holder marks its critical section on (StartReferee); and --resource, the
// protected resource every holder writes to, kept on the referee (package resource). Spec is
// the RefereeSpec they make. Their errors wrap ErrBadSpec and name the flag. A RefereeFlags is
// used by one goroutine.
type RefereeFlags struct {
	Addr, CAFile string
	Resource     string
	// ForResource: run had no --referee, and starts a native one to keep the resource on.
	ForResource bool
}

// Register adds the flags to fs, for lockbench run, or for a worker when worker is set.
func (g *RefereeFlags) Register(fs *pflag.FlagSet, worker bool) {
	if !worker {
		fs.StringVar(&g.Addr, "referee", "", "safety referee: a Redis that is not the one under test (host:port, redis://, rediss://; password in the URL or "+referee.EnvPassword+"), or 'native' for one lockbench starts (the default with exec: drivers; 'off' for none); every holder, in every process, marks its critical section there, and a second holder is a violation named with both (see docs/procs.md)")
	} else {
		fs.StringVar(&g.Addr, "referee", "", "safety referee every holder marks its critical section on (what lockbench run --referee gives its processes); needs --run")
	}
	fs.StringVar(&g.CAFile, "referee-ca-file", "", "with --referee rediss://: the CA that signed the referee's certificate")
	if !worker {
		fs.StringVar(&g.Resource, "resource", "", "protected resource every holder writes to as its hold starts and ends, kept on the referee (a native one is started without --referee): fenced (rejects a fencing token below the highest it accepted) or plain (accepts every write); the result counts corrupt writes, stale writes rejected and leases lost at release, for --workload contention (see docs/protected-resource.md)")
	} else {
		fs.StringVar(&g.Resource, "resource", "", "protected resource every holder writes to, fenced or plain (what lockbench run --resource gives its processes); needs --referee")
	}
}

// CheckResource returns what is wrong with --resource for workload, or nil. For run (worker
// unset) without --referee it asks for a native referee, where the resource is kept. A worker's
// --resource without --referee is WorkerSpec.Validate's.
func (g *RefereeFlags) CheckResource(worker bool, workload string) error {
	if g.Resource == "" {
		return nil
	}
	if err := resource.CheckKind(g.Resource); err != nil {
		return bad("--resource %q: want %s or %s", g.Resource, resource.Fenced, resource.Plain)
	}
	if w, err := workloads.Get(workload); err == nil && !workloads.WritesResource(w) {
		return bad("--resource is for --workload contention: the holders of %s write nothing to it", workload)
	}
	if g.Addr == RefereeOff {
		return bad("--resource lives on the referee: not with --referee off")
	}
	if g.Addr == "" && !worker {
		g.Addr, g.ForResource = NativeReferee, true
	}
	return nil
}

// Default gives lockbench run (worker unset) a native referee when an external driver (exec:)
// is among drivers and no referee is named: lockbench does not trust an adapter's word that it
// holds a lock, and the referee marks holders between the grant received and the release sent,
// inside the adapter's real hold (docs/external-drivers.md). --referee off turns it off (run
// only: a worker's is refused).
func (g *RefereeFlags) Default(worker bool, drivers []string) error {
	if g.Addr == RefereeOff {
		if worker {
			return bad("--referee off is lockbench run's: a worker uses the run's referee, if any")
		}
		g.Addr = ""
		return nil
	}
	if !worker && g.Addr == "" && extdriver.NeedsReferee(drivers) {
		g.Addr = NativeReferee
	}
	return nil
}

// Check returns what is wrong with --referee and --referee-ca-file, or nil. A worker's
// --referee without --run is WorkerSpec.Validate's.
func (g *RefereeFlags) Check(worker bool) error {
	switch {
	case g.Addr == "" && g.CAFile != "":
		return bad("--referee-ca-file needs --referee")
	case g.Addr == "":
		return nil
	case g.Addr == NativeReferee && worker:
		return bad("--referee native: a worker uses the run's referee; give its address")
	case g.Addr == NativeReferee:
		return nil
	}
	if _, err := referee.Settings(referee.Options{Addr: g.Addr, CAFile: g.CAFile}); err != nil {
		return bad("--referee: %v", err)
	}
	return nil
}

// Endpoint is the referee the flags name.
func (g *RefereeFlags) Endpoint() Endpoint { return Endpoint{Addr: g.Addr, CAFile: g.CAFile} }

// Spec is the referee run asks for, nil for none; a native one binds on nativeHost ("":
// loopback) and runs on cpus (PinFlags.Referee; empty: not placed).
func (g *RefereeFlags) Spec(nativeHost string, cpus pin.CPUs) *RefereeSpec {
	if g.Addr == "" {
		return nil
	}
	return &RefereeSpec{Endpoint: g.Endpoint(), Resource: g.Resource, NativeHost: nativeHost, ForResource: g.ForResource, NativeCPUs: cpus}
}
