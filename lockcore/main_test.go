package lockcore

import (
	"fmt"
	"os"
	"testing"

	"github.com/lockbench/lockbench/compose/docker/dockertest"
	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine running: watchdogs, subscriptions
// and rueidis connections must all stop with Close. rueidis' cluster client closes connections
// it dropped from its slot map 5 s after a refresh, in a goroutine that outlives Close by design;
// that one is not ours to stop.
// The Docker tests must also leave no container or network behind.
func TestMain(m *testing.M) {
	code := dockertest.AfterTests(m.Run())
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2")); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}
