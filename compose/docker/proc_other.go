//go:build !unix

package docker

// processAlive reports every process as alive where lockbench cannot tell, so Reap removes
// nothing there.
func processAlive(int) bool { return true }

// lockBuild does not serialise builds where flock is missing.
func lockBuild() (func(), error) { return func() {}, nil }
