package lockcore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker/dockertest"
	"github.com/lockbench/lockbench/internal/testparallel"
	"go.uber.org/goleak"
)

// The examples' Redis: three independent redis-servers the test binary starts on free
// loopback ports (see TestMain). Examples cannot take parameters, so they read these.
var (
	// redisAddr is the server the examples connect to; in your code, your Redis's host:port.
	redisAddr string
	// masterAddrs are independent masters for the RedLock example, redisAddr first.
	masterAddrs []string
)

// TestMain starts the examples' servers, and fails the package if any test leaves a goroutine
// running: watchdogs, subscriptions and rueidis connections must all stop with Close. rueidis'
// cluster client closes connections it dropped from its slot map 5 s after a refresh, in a
// goroutine that outlives Close by design; that one is not ours to stop.
// The Docker tests must also leave no container or network behind.
//
// The parallel tests run 4 at a time rather than go test's GOMAXPROCS (2 in CI): each brings its
// own servers and spends most of its time waiting on leases, replicas, node timeouts and
// topologies starting. The chaos tests, the neighbour bound, the partition and lost-reply faults
// and the 64-goroutine exclusion tests are not parallel: CPU-bound or timed, they run first, alone.
// Not 6: under a load of 19 a semantics suite's 64-goroutine case then ran into its 60 s deadline.
func TestMain(m *testing.M) {
	testparallel.Default(4)
	masters, err := compose.StartMasters(context.Background(), compose.NativeOptions{}, 3)
	if err != nil {
		// The tests skip without redis-server (and fail in CI); the examples cannot skip.
		fmt.Fprintf(os.Stderr, "FAIL: the examples' redis-servers: %v\n", err)
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci || !errors.Is(err, compose.ErrRedisServerNotFound) {
			os.Exit(1)
		}
		os.Exit(m.Run())
	}
	masterAddrs = masters.Addrs()
	redisAddr = masterAddrs[0]
	code := m.Run()
	if err := masters.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: stop the examples' redis-servers:", err)
		code = 1
	}
	code = dockertest.AfterTests(code)
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2")); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}
