//go:build !unix

package workloads

import "time"

// processCPU is unavailable here: the client CPU figures are left unmeasured.
func processCPU() (time.Duration, bool) { return 0, false }
