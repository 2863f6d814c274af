//go:build !linux

package netem

import "time"

// sleeper waits with a Go timer where there is no timerfd; see sleep_linux.go.
type sleeper struct{}

func newSleeper() *sleeper { return nil }

func (s *sleeper) sleep(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}

func (s *sleeper) close() {}
