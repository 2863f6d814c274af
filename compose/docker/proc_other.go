//go:build !unix

package docker

// processAlive reports every process as alive where lockbench cannot tell, so Reap removes
// nothing there.
func processAlive(int) bool { return true }
