package drivers_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// TestRueidislockOutlivesLockContext checks that a lock stays held after the context passed to
// Lock ends: rueidislock ties a lock to the context it was taken with.
func TestRueidislockOutlivesLockContext(t *testing.T) {
	l := open(t, "rueidislock", 2)
	a, b := l.NewWorker(), l.NewWorker()
	lctx, cancel := context.WithCancel(context.Background())
	if err := a.Lock(lctx, "ro:k"); err != nil {
		t.Fatal(err)
	}
	cancel()
	time.Sleep(50 * time.Millisecond) // a lock tied to lctx would be released by now
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if err := b.Lock(short, "ro:k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second worker's Lock = %v, want DeadlineExceeded: the lock was let go", err)
	}
	if err := a.Unlock(context.Background(), "ro:k"); err != nil {
		t.Fatalf("holder's Unlock = %v", err)
	}
}

// TestRueidislockKeyMajority checks the majority setting: with KeyMajority 2 a lock is at least
// two of three keys, and locks still exclude each other.
func TestRueidislockKeyMajority(t *testing.T) {
	cfg := single(t)
	cfg.Concurrency = 8
	l := openDriver(t, drivers.RueidislockDriver{KeyMajority: 2}, cfg)
	if got := l.Settings()["key_majority"]; got != "2 of 3 keys" {
		t.Errorf("key_majority setting %q", got)
	}
	exclude(t, l, "km", 8, 20, 2)
	rdb := inspect(t, cfg.Addrs[0])
	ctx := context.Background()
	w := l.NewWorker()
	if err := w.Lock(ctx, "km:x"); err != nil {
		t.Fatal(err)
	}
	held := 0
	for i := range 3 {
		held += int(rdb.Exists(ctx, fmt.Sprintf("rueidislock:%d:km:x", i)).Val())
	}
	if held < 2 {
		t.Errorf("%d of 3 keys set while held, want at least 2", held)
	}
	if err := w.Unlock(ctx, "km:x"); err != nil {
		t.Fatal(err)
	}
}
