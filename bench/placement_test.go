package bench

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/pin"
	"github.com/lockbench/lockbench/results"
)

// Place's decisions, for each way the CPUs can be asked for.
func TestPlace(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("CPU placement is Linux only")
	}
	single := compose.Spec{Kind: compose.KindSingle}
	avail := pin.CPUs{0, 1, 2, 3}
	cases := []struct {
		name           string
		mode           string
		server, client pin.CPUs
		spec           compose.Spec
		attached       bool
		avail          pin.CPUs
		want           results.Placement
	}{
		{"auto splits: one CPU per master, the highest", PinAuto, nil, nil, single, false, avail,
			results.Placement{Mode: "auto", ServerCPUs: "3", ClientCPUs: "0-2"}},
		{"auto on a cluster: a CPU per master, at most half", PinAuto, nil, nil, compose.Spec{Kind: compose.KindCluster}, false, avail,
			results.Placement{Mode: "auto", ServerCPUs: "2-3", ClientCPUs: "0-1"}},
		{"masters:N counts its masters", PinAuto, nil, nil, compose.Spec{Kind: compose.KindMasters, Masters: 1}, false, avail,
			results.Placement{Mode: "auto", ServerCPUs: "3", ClientCPUs: "0-2"}},
		{"one CPU: nothing to split", PinAuto, nil, nil, single, false, pin.CPUs{0},
			results.Placement{Mode: "auto", Shared: true, Note: "one CPU: nothing to split"}},
		{"server given: the client gets the rest", PinAuto, pin.CPUs{1}, nil, single, false, avail,
			results.Placement{Mode: "manual", ServerCPUs: "1", ClientCPUs: "0,2-3"}},
		{"client given: the servers get the rest", PinAuto, nil, pin.CPUs{0}, single, false, avail,
			results.Placement{Mode: "manual", ServerCPUs: "1-3", ClientCPUs: "0"}},
		{"every CPU to the servers leaves the client unplaced", PinAuto, avail, nil, single, false, avail,
			results.Placement{Mode: "manual", ServerCPUs: "0-3", Shared: true}},
		{"overlapping lists share", PinAuto, pin.CPUs{1, 2}, pin.CPUs{2, 3}, single, false, avail,
			results.Placement{Mode: "manual", ServerCPUs: "1-2", ClientCPUs: "2-3", Shared: true}},
		{"attached: the servers are not lockbench's", PinAuto, nil, nil, single, true, avail,
			results.Placement{Mode: "auto", Note: "lockbench did not start the deployment and does not place its servers"}},
		{"off shares on a started topology", PinOff, nil, nil, single, false, avail,
			results.Placement{Mode: "off", Shared: true}},
		{"off on an attached deployment", PinOff, nil, nil, single, true, avail,
			results.Placement{Mode: "off"}},
	}
	for _, tc := range cases {
		server, client, got := Place(tc.mode, tc.server, tc.client, tc.spec, tc.attached, tc.avail)
		if *got != tc.want {
			t.Errorf("%s: placement %+v; want %+v", tc.name, *got, tc.want)
		}
		if got.ServerCPUs != server.String() && tc.mode != PinOff || got.ClientCPUs != client.String() && tc.mode != PinOff {
			t.Errorf("%s: CPUs %s and %s; the placement says %q and %q", tc.name, server, client, got.ServerCPUs, got.ClientCPUs)
		}
	}
}

// PlaceRequest.Resolve refuses a bad mode, --server-cpus on an attached deployment and lists
// with --pin off, naming the flags.
func TestPlaceRequestRefuses(t *testing.T) {
	t.Parallel()
	given := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	single := compose.Spec{Kind: compose.KindSingle}
	for _, tc := range []struct {
		r        PlaceRequest
		attached bool
		want     string
	}{
		{PlaceRequest{Mode: "on", Given: given()}, false, `--pin "on": want auto or off`},
		{PlaceRequest{Mode: PinAuto, Server: "0", Given: given("server-cpus")}, true, "--server-cpus places the servers lockbench starts"},
		{PlaceRequest{Mode: PinOff, Client: "0", Given: given("client-cpus")}, false, "--pin off places nothing"},
	} {
		if _, _, _, err := tc.r.Resolve(single, tc.attached); !errors.Is(err, ErrBadSpec) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want ErrBadSpec, %q", tc.r, err, tc.want)
		}
	}
	if _, _, pl, err := (PlaceRequest{Mode: PinOff, Given: given()}).Resolve(single, false); err != nil || pl == nil || pl.Mode != PinOff {
		t.Errorf("--pin off: %+v, %v", pl, err)
	}
}

// RefereeCPUs puts a native referee with the servers, or off the client's CPUs, never on them.
func TestRefereeCPUs(t *testing.T) {
	t.Parallel()
	avail := pin.CPUs{0, 1, 2, 3}
	for _, tc := range []struct {
		name                 string
		server, client, want pin.CPUs
	}{
		{"placement off: not placed", nil, nil, nil},
		{"with the servers", pin.CPUs{3}, pin.CPUs{0, 1, 2}, pin.CPUs{3}},
		{"servers alone placed", pin.CPUs{2, 3}, nil, pin.CPUs{2, 3}},
		{"attached with --client-cpus: off the client's", nil, pin.CPUs{0}, pin.CPUs{1, 2, 3}},
		{"the client has every CPU: not placed", nil, avail, nil},
	} {
		if got := RefereeCPUs(tc.server, tc.client, avail); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v; want %v", tc.name, got, tc.want)
		}
	}
}
