//go:build race

package e2e

// raceBuild: the tests run under the race detector, so the binary they drive is built with it
// too, as cmd/lockbench's tests drive their own race-enabled test binary.
const raceBuild = true
