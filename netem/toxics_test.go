package netem

import (
	"testing"
	"time"
)

// The delay of each chunk stays within latency ± jitter and spreads over that range.
func TestDelayJitter(t *testing.T) {
	d := &delayToxic{LatencyNS: int64(time.Millisecond), JitterNS: int64(200 * time.Microsecond)}
	lo, hi := time.Hour, time.Duration(0)
	for range 10000 {
		x := d.delay()
		if x < 800*time.Microsecond || x > 1200*time.Microsecond {
			t.Fatalf("delay %v outside 1ms ± 200us", x)
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	// 10000 uniform draws: the extremes land within 1% of the range's ends.
	if lo > 804*time.Microsecond || hi < 1196*time.Microsecond {
		t.Errorf("delays spread only over %v–%v of 800us–1.2ms", lo, hi)
	}
	if got := (&delayToxic{LatencyNS: int64(time.Millisecond)}).delay(); got != time.Millisecond {
		t.Errorf("delay without jitter = %v, want 1ms", got)
	}
}
