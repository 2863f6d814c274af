package compose

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/pin"
)

// Servers started with NativeOptions.CPUs run on those CPUs from the start (every thread, since
// their threads inherit the mask), and a server restarted after a kill runs there again.
func TestServersRunOnTheirCPUs(t *testing.T) {
	requireRedis(t)
	avail, err := pin.Available()
	if err != nil {
		t.Fatal(err)
	}
	if len(avail) < 2 {
		t.Skip("one CPU: a placement cannot be told from none")
	}
	cpus := avail[len(avail)-1:]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := StartMasters(ctx, NativeOptions{CPUs: cpus}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	addrs := m.Addrs()
	check := func(when string) {
		t.Helper()
		for _, a := range addrs {
			if got, err := pin.Of(m.Pid(a)); err != nil || !slices.Equal(got, cpus) {
				t.Errorf("%s: %s (pid %d) may run on %v (%v); want %v", when, a, m.Pid(a), got, err, cpus)
			}
		}
	}
	check("started")
	if err := m.Kill(addrs[0]); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(ctx, addrs[0]); err != nil {
		t.Fatal(err)
	}
	check("restarted")
	if now, _ := pin.Available(); !slices.Equal(now, avail) {
		t.Errorf("starting the servers changed this process's CPUs to %v (was %v)", now, avail)
	}
}
