//go:build !unix

package adapter

// stopSelf blocks the caller forever: without SIGSTOP the rest of the process runs on, so the
// hang-after fault is a stuck acquire here, not a hung process.
func stopSelf() { select {} }
