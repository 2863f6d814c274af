package drivers

import "errors"

// ErrBroken is wrapped by a Worker's error when the driver can do nothing more: every operation
// after it will fail at once (an external driver's adapter died, hung or wrote garbage). A
// workload counts it and ends the phase rather than counting the same failure until the
// duration runs out.
var ErrBroken = errors.New("drivers: driver broken")
