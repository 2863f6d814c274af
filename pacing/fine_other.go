//go:build !linux

package pacing

import "time"

// fineTimer is a Go timer where there is no timerfd; see fine_linux.go.
type fineTimer struct{}

func newFineTimer() *fineTimer { return nil }

func (t *fineTimer) sleep(d time.Duration) { time.Sleep(d) }

func (t *fineTimer) close() {}
