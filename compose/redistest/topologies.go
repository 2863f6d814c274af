package redistest

import (
	"errors"
	"testing"

	"github.com/lockbench/lockbench/compose"
)

// NewSentinel starts a private sentinel topology (1 master, 2 replicas, 3 sentinels) for the
// test with master name compose.DefaultMasterName, and stops it when the test ends. Missing
// redis-server is handled as in NewServer. Safe for concurrent use by parallel tests.
func NewSentinel(t testing.TB) *compose.Sentinel {
	t.Helper()
	s, err := compose.StartSentinel(t.Context(), compose.NativeOptions{}, compose.DefaultMasterName)
	started(t, "sentinel", s, err)
	return s
}

// NewCluster starts a private 3-master, 3-replica Redis Cluster for the test and stops it when
// the test ends. Missing redis-server is handled as in NewServer. Safe for concurrent use by
// parallel tests.
func NewCluster(t testing.TB) *compose.Cluster {
	t.Helper()
	c, err := compose.StartCluster(t.Context(), compose.NativeOptions{})
	started(t, "cluster", c, err)
	return c
}

// NewMasters starts n private independent masters for the test and stops them when the test
// ends. Missing redis-server is handled as in NewServer. Safe for concurrent use by parallel
// tests.
func NewMasters(t testing.TB, n int) *compose.Masters {
	t.Helper()
	m, err := compose.StartMasters(t.Context(), compose.NativeOptions{}, n)
	started(t, "masters", m, err)
	return m
}

// started fails or skips the test on a start error and registers the topology's Close.
func started[T compose.Topology](t testing.TB, what string, top T, err error) {
	t.Helper()
	if errors.Is(err, compose.ErrRedisServerNotFound) {
		if inCI() {
			t.Fatalf("redistest: %v\n(CI is set: the CI machine must have redis-server; scripts/install-deps.sh installs it)", err)
		}
		t.Skipf("redistest: %v", err)
	}
	if err != nil {
		t.Fatalf("redistest: start %s: %v", what, err)
	}
	t.Cleanup(func() {
		if err := top.Close(); err != nil {
			t.Errorf("redistest: stop %s: %v", what, err)
		}
	})
}
