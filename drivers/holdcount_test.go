package drivers_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// TestHoldCountReadsRedis checks every HoldCounter against a real server: the count follows
// nested Locks where the driver is reentrant, another worker reads 0, and a released or
// expired lock reads 0.
func TestHoldCountReadsRedis(t *testing.T) {
	for _, name := range append(drivers.Names(), drivers.Controls()...) {
		d, _ := drivers.Get(name)
		l := open(t, name, 2)
		w, ok := l.NewWorker().(drivers.HoldCounter)
		if !ok {
			t.Logf("%s: no HoldCount", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			count := func(hc drivers.HoldCounter, want int64) {
				t.Helper()
				if n, err := hc.HoldCount(ctx, "hc"); err != nil || n != want {
					t.Fatalf("HoldCount = %d, %v; want %d", n, err, want)
				}
			}
			count(w, 0)
			if err := w.Lock(ctx, "hc"); err != nil {
				t.Fatal(err)
			}
			count(w, 1)
			depth := int64(1)
			if d.Kinds().Has(drivers.KindReentrant) {
				if err := w.Lock(ctx, "hc"); err != nil {
					t.Fatal(err)
				}
				depth = 2
				count(w, 2)
			}
			count(l.NewWorker().(drivers.HoldCounter), 0)
			for range depth {
				if err := w.Unlock(ctx, "hc"); err != nil {
					t.Fatal(err)
				}
			}
			count(w, 0)
		})
	}
}
