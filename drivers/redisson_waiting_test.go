package drivers_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

// waitOnHeld has holders take n locks, then n waiters of locker l wait for one each until ctx
// ends or the holders release after release; it returns the waiters' errors.
func waitOnHeld(t *testing.T, cfg drivers.Config, l drivers.Locker, prefix string, n int, release time.Duration) []error {
	t.Helper()
	holders := openWith(t, "redisson", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h := holders.NewWorker()
	for i := range n {
		must(t, h.Lock(ctx, prefix+strconv.Itoa(i)))
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			w := l.NewWorker()
			name := prefix + strconv.Itoa(i)
			if errs[i] = w.Lock(ctx, name); errs[i] == nil {
				errs[i] = w.Unlock(ctx, name)
			}
		})
	}
	time.Sleep(release)
	for i := range n {
		must(t, h.Unlock(ctx, prefix+strconv.Itoa(i)))
	}
	wg.Wait()
	return errs
}

// TestRedissonSubscriptionCap checks that Redisson 3.43's pub/sub pool, here shrunk to one
// connection of two channels with a 300 ms subscribe timeout, makes waiters on more locks than
// that fail with a subscribe timeout while the first two wait and get their locks — and that
// lockcore, waiting on the same locks, has no such cap.
func TestRedissonSubscriptionCap(t *testing.T) {
	cfg := single(t)
	cfg.Concurrency = 6
	const waiters = 6
	d, err := drivers.Parse("redisson:version=3.43:pubsub_conns=1:channels_per_conn=2:subscribe_timeout=300ms")
	if err != nil {
		t.Fatal(err)
	}
	l := openDriver(t, d, cfg)
	errs := waitOnHeld(t, cfg, l, "cap:", waiters, time.Second)
	timeouts := 0
	for _, err := range errs {
		switch {
		case errors.Is(err, drivers.ErrRedissonSubscribeTimeout):
			timeouts++
		case err != nil:
			t.Errorf("waiter: %v", err)
		}
	}
	ws := l.(drivers.WaitCountingLocker).WaitStats()
	// Two channels fit; the other waiters find no slot within the timeout (or wait behind a
	// subscription lock and time out there).
	if timeouts != waiters-2 {
		t.Errorf("%d of %d waiters failed with a subscribe timeout; want %d (2 channels fit)", timeouts, waiters, waiters-2)
	}
	if ws.SubscribeTimeouts < int64(waiters-2) || ws.PeakChannels != 2 {
		t.Errorf("wait stats %+v: want ≥ %d subscribe timeouts and a peak of 2 channels", ws, waiters-2)
	}

	lc := openWith(t, "lockcore", cfg)
	for i, err := range waitOnHeld(t, cfg, lc, "capl:", waiters, time.Second) {
		if err != nil {
			t.Errorf("lockcore waiter %d: %v", i, err)
		}
	}
	if ws := lc.(drivers.WaitCountingLocker).WaitStats(); ws.PeakChannels != waiters {
		t.Errorf("lockcore wait stats %+v: want a peak of %d channels, one per lock waited for", ws, waiters)
	}
}
