package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/pin"
)

// A native referee given CPUs runs on them, as the deployment's servers do, and says so in its
// start line; one given none is not placed (it may run wherever this process may).
func TestNativeRefereeCPUs(t *testing.T) {
	t.Parallel()
	avail, err := pin.Available()
	if err != nil {
		t.Fatal(err)
	}
	if len(avail) < 2 {
		t.Skip("one CPU: a placement cannot be told from none")
	}
	tg := openSingle(t)
	cpus := avail[len(avail)-1:]
	for _, tc := range []struct {
		cpus, want pin.CPUs
		line       string
	}{
		{cpus, cpus, "(native, CPUs " + cpus.String() + ")"},
		{nil, avail, "(native)"},
	} {
		rep := &lines{}
		ref, err := StartReferee(t.Context(), tg, RefereeSpec{Endpoint: Endpoint{Addr: NativeReferee}, NativeCPUs: tc.cpus}, rep)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pin.Of(ref.native.Pid())
		ref.Close()
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("referee started with CPUs %v may run on %v (%v); want %v", tc.cpus, got, err, tc.want)
		}
		if !strings.Contains(rep.String(), tc.line) {
			t.Errorf("start line %q; want %q in it", rep, tc.line)
		}
	}
	if now, _ := pin.Available(); !slices.Equal(now, avail) {
		t.Errorf("starting the referee changed this process's CPUs to %v (was %v)", now, avail)
	}
}
