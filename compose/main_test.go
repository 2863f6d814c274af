package compose

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/testparallel"
)

// TestMain fails the run if any goroutine of this package outlives the tests: the reaper and the
// readiness watcher must all end once servers are closed or starts have failed.
//
// The parallel tests mostly wait for the deployments they start to become ready, so more of them
// run at once than go test's default (GOMAXPROCS).
func TestMain(m *testing.M) {
	testparallel.Default(4)
	code := m.Run()
	if code == 0 {
		if leaked := leakedGoroutines(2 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "leaked goroutines:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// leakedGoroutines waits up to wait for goroutines running this package's code to end, and
// returns the stacks of those that do not.
func leakedGoroutines(wait time.Duration) string {
	deadline := time.Now().Add(wait)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "lockbench/compose.") && !strings.Contains(g, "compose.TestMain") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
