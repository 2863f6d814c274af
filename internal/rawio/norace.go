//go:build !race

package rawio

// Released is a no-op without the race detector (race.go).
func Released() {}

// Acquired is a no-op without the race detector (race.go).
func Acquired() {}
