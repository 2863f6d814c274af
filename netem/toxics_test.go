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

// A Sever returns at once when no link is open, and reports, rather than waits forever for, a
// link that does not let go; links that join later belong to the next Sever.
func TestFaultCtlSever(t *testing.T) {
	c := newFaultCtl()
	defer c.close()
	if err := c.sever(time.Second); err != nil {
		t.Fatalf("sever without links: %v", err)
	}
	stuck := c.join() // a link whose toxic never runs
	if err := c.sever(50 * time.Millisecond); err == nil {
		t.Fatal("sever with a link that never leaves: no error")
	}
	if !isClosed(stuck.epoch.severed) {
		t.Error("the link's epoch is not severed")
	}
	later := c.join()
	if later.epoch == stuck.epoch || isClosed(later.epoch.severed) {
		t.Error("a link joining after sever is in the severed epoch")
	}
	if lookupFaultCtl(c.id) != c {
		t.Error("ctl not registered")
	}
	c.close()
	if !isClosed(later.epoch.severed) || lookupFaultCtl(c.id) != nil {
		t.Error("close left a link unsevered or the ctl registered")
	}
	if err := c.sever(time.Second); err != nil {
		t.Errorf("sever after close: %v", err)
	}
}
