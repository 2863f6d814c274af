package lockcore

import "time"

// The stated bound on an outside waiter's wait (docs/lockcore.md, "Waiters outside the
// Client"), as the tests hold a Redisson-like neighbour to it (TestSubscribedNeighbourBound,
// TestChaos's outside waiter). It follows the hold-back rules of outside.go.

// outsideRounds is how many releases heard by an outside waiter at round trip rtt go by before
// it gets the lock: the hold-back doubles from yield until it exceeds rtt, and the release
// after which it does is the one the waiter wins.
func outsideRounds(rtt, yield time.Duration) int {
	n := 1
	for y := yield; y <= rtt && n <= maxOutsideShift; y *= 2 {
		n++
	}
	return n
}

// outsideBound is the stated bound on an outside waiter's wait for a lock that one Client
// keeps hot with holds of hold, the waiter subscribed at round trip rtt: the first release
// heard by it comes within a chain (window) and a hold; each of outsideRounds rounds is a hold-
// back, a round trip and a chain with its last hold.
func outsideBound(rtt, hold, window, yield time.Duration) time.Duration {
	b := window + hold
	y := yield
	for range outsideRounds(rtt, yield) {
		b += y + rtt + window + hold
		y = min(y*2, yield<<maxOutsideShift)
	}
	return b
}
