//go:build !linux

package pacing

import "time"

// fineTimer is a Go timer where there is no timerfd; see fine_linux.go.
type fineTimer struct{}

func newFineTimer() *fineTimer { return nil }

func (t *fineTimer) sleep(d time.Duration) bool {
	time.Sleep(d)
	return true
}

func (t *fineTimer) interrupt() {}

func (t *fineTimer) resume() {}

func (t *fineTimer) close() {}
