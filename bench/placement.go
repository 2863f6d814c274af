package bench

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/pin"
	"github.com/lockbench/lockbench/results"
)

// The placement modes Place takes (lockbench's --pin).
const (
	// PinAuto splits the CPUs between the servers and lockbench when no list is given.
	PinAuto = "auto"
	// PinOff places nothing: the scheduler decides.
	PinOff = "off"
)

// Place decides where the servers lockbench starts for spec, and lockbench itself, run: server
// and client are the CPUs asked for (either may be empty), avail the CPUs lockbench may use.
// With one list given the other side gets the rest of avail; with none, PinAuto splits avail
// (pin.Split, one CPU per master) and PinOff places nothing. attached says lockbench did not
// start the servers, so places none of them. It returns the CPUs of each side (empty: not
// placed) and the placement a result records. It is safe for concurrent use.
func Place(mode string, server, client pin.CPUs, spec compose.Spec, attached bool, avail pin.CPUs) (pin.CPUs, pin.CPUs, *results.Placement) {
	pl := &results.Placement{Mode: mode}
	if mode == PinOff {
		pl.Shared = !attached
		return server, client, pl
	}
	explicit := len(server) > 0 || len(client) > 0
	if explicit {
		pl.Mode = "manual"
	}
	switch {
	case attached:
		pl.Note = "lockbench did not start the deployment and does not place its servers"
	case runtime.GOOS != "linux":
		pl.Note = "CPU placement needs Linux"
		pl.Shared = true
	case len(server) > 0 && len(client) == 0:
		client = without(avail, server)
	case len(client) > 0 && len(server) == 0:
		server = without(avail, client)
	case !explicit:
		var ok bool
		if server, client, ok = pin.Split(avail, mastersOf(spec)); !ok {
			pl.Note = "one CPU: nothing to split"
		}
	}
	pl.ServerCPUs, pl.ClientCPUs = server.String(), client.String()
	if !attached && (len(server) == 0 || len(client) == 0 || len(server.Intersect(client)) > 0) {
		pl.Shared = true
	}
	return server, client, pl
}

// RefereeCPUs is where a native referee's redis-server runs with a placement of server and
// client CPUs out of avail: on the servers' CPUs when lockbench places servers; on the CPUs
// other than the client's when only the client is placed (an attached deployment with
// --client-cpus: a referee started unplaced would inherit lockbench's CPUs); nil (not placed)
// when nothing is, or when the client has every CPU. The referee is never put on the client's
// CPUs: its command and Lua work would compete with the client's. It is safe for concurrent use.
func RefereeCPUs(server, client, avail pin.CPUs) pin.CPUs {
	switch {
	case len(server) > 0:
		return server
	case len(client) > 0:
		return without(avail, client)
	}
	return nil
}

// without returns the CPUs of avail not in c; nil (not placed) when that leaves none.
func without(avail, c pin.CPUs) pin.CPUs {
	var out pin.CPUs
	for _, x := range avail {
		if len(c.Intersect(pin.CPUs{x})) == 0 {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// mastersOf is how many servers of spec execute the lock commands: the ones that need a CPU of
// their own to be measured alone.
func mastersOf(spec compose.Spec) int {
	switch spec.Kind {
	case compose.KindCluster:
		return compose.ClusterMasters
	case compose.KindMasters:
		return spec.Masters
	}
	return 1
}

// PlaceRequest is a CPU placement as a user asks for it: lockbench run's and sweep's --pin
// (Mode), --server-cpus and --client-cpus (taskset lists: 1, 2-3, 1,3). Given reports whether
// the flag of that name was set.
type PlaceRequest struct {
	Mode           string
	Server, Client string
	Given          func(flag string) bool
}

// Resolve checks r, parses its lists against the CPUs this process may use, and decides with
// Place where spec's servers (none of them lockbench's when attached) and lockbench run. The
// error wraps ErrBadSpec and names the flag.
func (r PlaceRequest) Resolve(spec compose.Spec, attached bool) (server, client pin.CPUs, pl *results.Placement, err error) {
	switch r.Mode {
	case PinAuto, PinOff:
	default:
		return nil, nil, nil, bad("--pin %q: want auto or off", r.Mode)
	}
	if attached && r.Given("server-cpus") {
		return nil, nil, nil, bad("--server-cpus places the servers lockbench starts; with --addr lockbench does not own the servers (place them where they run, e.g. taskset or docker --cpuset-cpus)")
	}
	if r.Mode == PinOff && (r.Given("server-cpus") || r.Given("client-cpus")) {
		return nil, nil, nil, bad("--pin off places nothing: drop it, or drop --server-cpus/--client-cpus")
	}
	avail, err := pin.Available()
	if err != nil {
		return nil, nil, nil, &badSpec{msg: err.Error(), cause: err}
	}
	if r.Given("server-cpus") {
		if server, err = parseCPUs("server-cpus", r.Server, avail); err != nil {
			return nil, nil, nil, err
		}
	}
	if r.Given("client-cpus") {
		if client, err = parseCPUs("client-cpus", r.Client, avail); err != nil {
			return nil, nil, nil, err
		}
	}
	server, client, pl = Place(r.Mode, server, client, spec, attached, avail)
	return server, client, pl, nil
}

// parseCPUs reads the CPU list of flag --name, which this process must be able to use
// (pin.ParseUsable).
func parseCPUs(name, list string, avail pin.CPUs) (pin.CPUs, error) {
	cpus, err := pin.ParseUsable(list, avail)
	switch {
	case errors.Is(err, pin.ErrNotAvailable):
		return nil, &badSpec{msg: "--" + name + " " + err.Error(), cause: err}
	case err != nil:
		return nil, &badSpec{msg: fmt.Sprintf("--%s: %v", name, err), cause: err}
	}
	return cpus, nil
}
