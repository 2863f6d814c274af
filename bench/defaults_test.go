package bench

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// The defaults keep what their comments promise: a stall threshold above a loaded machine's
// second of descheduling and no shorter than the drivers' reply timeout (a stall that long also
// fails calls as timeouts, so the run shows it both ways); an abort check after the set-up.
func TestDefaults(t *testing.T) {
	t.Parallel()
	if DefaultStallThreshold <= time.Second || DefaultStallThreshold < drivers.ReplyTimeout {
		t.Errorf("DefaultStallThreshold %v: want above 1s and at least drivers.ReplyTimeout %v", DefaultStallThreshold, drivers.ReplyTimeout)
	}
	if DefaultAbortAfter < 500*time.Millisecond {
		t.Errorf("DefaultAbortAfter %v: want past the first few hundred milliseconds of set-up", DefaultAbortAfter)
	}
	s := Spec{Drivers: []string{"naive"}, StallThreshold: DefaultStallThreshold, AbortAfter: DefaultAbortAfter}
	if err := s.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}
