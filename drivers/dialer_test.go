package drivers_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/drivers"
)

// redirectDialer stands in for a netem.Net: it dials real addresses in place of the fake ones
// in to, and counts the dials. The fake addresses are loopback ports where nothing listens, so
// a client that dialed one directly, past Config.Dialer, would fail to connect.
type redirectDialer struct {
	to    map[string]string
	mu    sync.Mutex
	dials map[string]int // by the address asked for
}

func (d *redirectDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dials[addr]++
	d.mu.Unlock()
	if real, ok := d.to[addr]; ok {
		addr = real
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

// TestDialerMakesEveryConnection opens every driver, negative controls included, on addresses
// only Config.Dialer can reach, and takes and releases a lock: every connection the driver
// needs went through the Dialer. Single for all drivers; independent masters for those that
// run on them (the others are skipped there).
func TestDialerMakesEveryConnection(t *testing.T) {
	single := redistest.NewServer(t).Addr()
	masters := redistest.NewMasters(t, 2).Addrs()
	deployments := []struct {
		topology string
		real     []string
	}{
		{compose.KindSingle, []string{single}},
		{compose.KindMasters, masters},
	}
	names := slices.Concat(drivers.Names(), drivers.Controls(), drivers.References())
	for _, dep := range deployments {
		for _, name := range names {
			t.Run(dep.topology+"/"+name, func(t *testing.T) {
				d := &redirectDialer{to: map[string]string{}, dials: map[string]int{}}
				var fake []string
				for i, real := range dep.real {
					f := fmt.Sprintf("127.0.0.1:%d", i+1) // privileged ports: nothing listens
					d.to[f] = real
					fake = append(fake, f)
				}
				drv, err := drivers.Get(name)
				if err != nil {
					t.Fatal(err)
				}
				cfg := drivers.Config{Topology: dep.topology, Addrs: fake, Concurrency: 2, Dialer: d.dial}
				l, err := drv.Open(t.Context(), cfg)
				if errors.Is(err, drivers.ErrUnsupported) {
					t.Skipf("%s on %s: %v", name, dep.topology, err)
				}
				if err != nil {
					t.Fatalf("open through the dialer: %v", err)
				}
				defer l.Close()
				w := l.NewWorker()
				key := "dialer:" + name
				if err := w.Lock(t.Context(), key); err != nil {
					t.Fatalf("lock: %v", err)
				}
				if err := w.Unlock(t.Context(), key); err != nil {
					t.Fatalf("unlock: %v", err)
				}
				d.mu.Lock()
				defer d.mu.Unlock()
				for _, f := range fake {
					if d.dials[f] == 0 {
						t.Errorf("no dial to %s through the Dialer; dials: %v", f, d.dials)
					}
				}
			})
		}
	}
}
