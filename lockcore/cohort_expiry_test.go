package lockcore

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestReservedWaiterSurvivesReclaim holds a hot Mutex about as long as its explicit lease, so
// that a release often reserves the next local waiter while another waiter's check finds the
// lease run out and reclaims the turn. The reserved waiter must still get a turn: every Lock
// returns once its context ends, and no worker is left waiting. (The longhold workload hung on
// a waiter reserved by a release whose holder was reclaimed during the release's round trip.)
func TestReservedWaiterSurvivesReclaim(t *testing.T) {
	env := newEnv(t)
	c := env.client(t, Options{})
	const workers, lease = 6, 20 * time.Millisecond
	stop := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, m := c.NewOwner(), c.Mutex("expiry")
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			for time.Now().Before(stop) {
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				err := m.LockLease(ctx, o, lease)
				cancel()
				if err != nil {
					continue
				}
				// Around the lease: some releases come just after it ran out.
				time.Sleep(lease - 3*time.Millisecond + time.Duration(rng.IntN(6000))*time.Microsecond)
				_ = m.Unlock(context.Background(), o)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("workers still waiting 28 s after the last Lock's context ended: a queued waiter lost its turn")
	}
}
