package drivers_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/drivers"
)

// started fails the test on a start error, or skips it when redis-server is missing (as
// redistest.NewServer does), and stops the topology when the test ends.
func started[T compose.Topology](t *testing.T, top T, err error) T {
	t.Helper()
	if errors.Is(err, compose.ErrRedisServerNotFound) {
		t.Skipf("compose: %v", err)
	}
	if err != nil {
		t.Fatalf("compose: %v", err)
	}
	t.Cleanup(func() {
		if err := top.Close(); err != nil {
			t.Errorf("compose: stop %s: %v", top.Kind(), err)
		}
	})
	return top
}

// onTopology runs every driver that supports cfg's topology through mutual exclusion under
// concurrency and a prompt hand-over to a waiter.
func onTopology(t *testing.T, cfg drivers.Config) {
	for _, name := range drivers.Names() {
		t.Run(name, func(t *testing.T) {
			cfg := cfg
			cfg.Concurrency = 16
			l := openWith(t, name, cfg)
			// Keys spread over slots (and so over the shards of a cluster).
			exclude(t, l, "topo", 16, 20, 4)
			handOver(t, l, "topo:handover")
		})
	}
}

func TestDriversOnSentinel(t *testing.T) {
	t.Parallel() // its own deployment, mostly waited for
	s, err := compose.StartSentinel(t.Context(), compose.NativeOptions{}, "")
	s = started(t, s, err)
	cfg := drivers.Config{Topology: compose.KindSentinel, Addrs: s.Addrs(), MasterName: s.MasterName()}
	onTopology(t, cfg)
	// The sentinel's master has replicas: lockcore waits for them by default, and says so in
	// the settings a result records; sync=off says it does not.
	for spec, want := range map[string]string{"lockcore": "auto: WAIT ", "lockcore-fenced:sync=wait": "wait: WAIT ", "lockcore:sync=off": "off: no WAIT"} {
		d, err := drivers.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := openDriver(t, d, cfg).Settings()["sync"]; !strings.HasPrefix(got, want) {
			t.Errorf("%s: settings[sync] = %q, want it to start %q", spec, got, want)
		}
	}
}

func TestDriversOnCluster(t *testing.T) {
	t.Parallel() // its own cluster, mostly waited for
	c, err := compose.StartCluster(t.Context(), compose.NativeOptions{})
	c = started(t, c, err)
	onTopology(t, drivers.Config{Topology: compose.KindCluster, Addrs: c.Addrs()})
}

// TestRedsyncMasters checks redsync's RedLock over three independent masters: locks are set on
// every master and exclude each other; with one master dead the quorum of two still grants
// locks; with two dead Lock fails with an error instead of waiting forever.
func TestRedsyncMasters(t *testing.T) {
	t.Parallel() // its own masters; most of its time is starting them and redsync's retries on dead ones
	m, err := compose.StartMasters(t.Context(), compose.NativeOptions{}, 3)
	m = started(t, m, err)
	addrs := m.Addrs()
	cfg := drivers.Config{Topology: compose.KindMasters, Addrs: addrs, Concurrency: 16}
	l := openWith(t, "redsync", cfg)
	if got := l.Settings()["quorum"]; got != "2" {
		t.Errorf("quorum setting %q, want 2", got)
	}
	exclude(t, l, "rl", 16, 20, 3)

	ctx := context.Background()
	w := l.NewWorker()
	if err := w.Lock(ctx, "rl:everywhere"); err != nil {
		t.Fatal(err)
	}
	for _, addr := range addrs {
		if inspect(t, addr).Exists(ctx, "rl:everywhere").Val() != 1 {
			t.Errorf("lock key missing on master %s", addr)
		}
	}
	if err := w.Unlock(ctx, "rl:everywhere"); err != nil {
		t.Fatal(err)
	}

	if err := m.Kill(addrs[0]); err != nil {
		t.Fatal(err)
	}
	exclude(t, l, "rl1", 8, 10, 2)
	handOver(t, l, "rl1:handover")

	if err := m.Kill(addrs[1]); err != nil {
		t.Fatal(err)
	}
	// ctx never ends: only the driver giving up returns.
	if err := w.Lock(ctx, "rl2:x"); err == nil {
		t.Fatal("Lock with 2 of 3 masters dead succeeded")
	}
}
