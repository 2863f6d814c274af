package drivers_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// TestFloorIsAReferenceNotALock checks where the floor is listed: Get finds it, but nothing
// that runs every driver or every negative control picks it up, and it says what it is.
func TestFloorIsAReferenceNotALock(t *testing.T) {
	if _, err := drivers.Get("floor"); err != nil {
		t.Fatalf("Get(floor): %v", err)
	}
	if !slices.Contains(drivers.References(), "floor") {
		t.Errorf("References() = %v, want floor in it", drivers.References())
	}
	if slices.Contains(drivers.Names(), "floor") || slices.Contains(drivers.Controls(), "floor") {
		t.Errorf("floor in Names() %v or Controls() %v", drivers.Names(), drivers.Controls())
	}
	_, err := drivers.Get("nosuch")
	if err == nil || !strings.Contains(err.Error(), "references: [floor]") {
		t.Errorf("unknown driver error %v does not list the references", err)
	}
	l := open(t, "floor", 2)
	if p := l.Settings()["purpose"]; !strings.HasPrefix(p, "REFERENCE, not a lock") {
		t.Errorf("purpose setting %q", p)
	}
}

// TestFloorCommandsPerAcquisition checks the floor is what it claims: one SET and one DEL per
// acquisition and no script, with the names excluding each other while held.
func TestFloorCommandsPerAcquisition(t *testing.T) {
	cfg := single(t)
	cfg.Concurrency = 8
	l := openWith(t, "floor", cfg)
	rdb := inspect(t, cfg.Addrs[0])
	ctx := context.Background()
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	w := l.NewWorker()
	const n = 50
	for i := range n {
		name := "floor:" + strconv.Itoa(i)
		if err := w.Lock(ctx, name); err != nil {
			t.Fatal(err)
		}
		if ttl := rdb.PTTL(ctx, name).Val(); ttl <= 0 || ttl > drivers.FloorDefaultLease {
			t.Fatalf("held %s has PTTL %v, want within the default lease %v", name, ttl, drivers.FloorDefaultLease)
		}
		if err := w.Unlock(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	calls := commandCalls(t, rdb)
	for cmd, want := range map[string]int64{"set": n, "del": n, "eval": 0, "evalsha": 0} {
		if got := calls[cmd]; got != want {
			t.Errorf("%d acquisitions made %d %s calls, want %d", n, got, cmd, want)
		}
	}
	if err := w.Unlock(ctx, "floor:0"); !errors.Is(err, drivers.ErrNotHeld) {
		t.Errorf("Unlock of a name not held = %v, want ErrNotHeld", err)
	}

	// A taken name waits: a second worker gets it only after the first lets go.
	a, b := l.NewWorker(), l.NewWorker()
	if err := a.Lock(ctx, "floor:x"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := b.Lock(short, "floor:x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second worker's Lock of a held name = %v, want DeadlineExceeded", err)
	}
	if err := a.Unlock(ctx, "floor:x"); err != nil {
		t.Fatal(err)
	}
	if err := b.Lock(ctx, "floor:x"); err != nil {
		t.Fatalf("second worker's Lock after the release: %v", err)
	}
	exclude(t, l, "floorx", 8, 20, 2)
}
