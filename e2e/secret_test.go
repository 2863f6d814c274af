//go:build unix

package e2e

import "github.com/lockbench/lockbench/internal/clitest"

// The password checks of the --auth tests (internal/clitest, shared with the other package
// that runs the lockbench command).
var (
	watchSecret         = clitest.WatchSecret
	assertSecretNowhere = clitest.AssertSecretNowhere
)
