package workloads

import (
	"os"
	"testing"

	"github.com/lockbench/lockbench/internal/testparallel"
)

// TestMain runs more parallel tests at once than go test's default (GOMAXPROCS): most of their
// time is waiting on a paused, killed or failing-over server, or on a phase's fixed duration.
// Not more than 4: at 8, under a load of 9 on this 2-core machine, a rueidislock run hit its 2 s
// reply timeout.
func TestMain(m *testing.M) {
	testparallel.Default(4)
	os.Exit(m.Run())
}
