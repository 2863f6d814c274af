package workloads

import (
	"errors"
	"testing"

	"github.com/lockbench/lockbench/drivers"
)

func isUnsupported(err error) bool { return errors.Is(err, drivers.ErrUnsupported) }
func isBadConfig(err error) bool   { return errors.Is(err, ErrBadConfig) }

func TestFIFOTrackerRule(t *testing.T) {
	tr := NewFIFOTracker()
	a := tr.Arrive(0) // free key: not queued
	tr.Granted(0, a, true)
	b := tr.Arrive(0) // held: queued
	c := tr.Arrive(0) // queued behind b
	tr.Released(0)
	tr.Granted(0, c, true) // c overtakes b: out of order
	tr.Released(0)
	tr.Granted(0, b, true) // b is the oldest waiter left: in order
	d := tr.Arrive(0)      // held by b: queued
	tr.Abandon(0, d)
	tr.Released(0)
	if q, in := tr.Counts(); q != 2 || in != 1 {
		t.Fatalf("queued %d, in order %d; want 2 and 1", q, in)
	}
	// Warm-up grants (count false) are not counted, and idle keys are forgotten.
	e := tr.Arrive(1)
	tr.Granted(1, e, false)
	f := tr.Arrive(1)
	tr.Released(1)
	tr.Granted(1, f, false)
	tr.Released(1)
	if q, _ := tr.Counts(); q != 2 {
		t.Fatalf("uncounted grants counted: queued %d", q)
	}
	for i := range tr.shards {
		if n := len(tr.shards[i].keys); n != 0 {
			t.Fatalf("shard %d keeps %d idle keys", i, n)
		}
	}
}
