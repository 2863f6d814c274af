package progress_test

import (
	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/progress"
)

// UI is the Reporter of lockbench's bench sessions. Checked here rather than in the package, so
// that the package does not import bench (and all it runs) for one assertion.
var _ bench.Reporter = (*progress.UI)(nil)
