package lockcore

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

// Audit 2, finding 5 (the Close half). A turn given to a queued waiter (here a hand-over inside the process)
// that the waiter takes after Close made Lock return nil on a closed Client, whose watchdog no
// longer renews the lock: the docs promise ErrClosed. With one P, the hand-over and Close both
// happen before the waiter runs nearly every round; a round whose waiter ran first (the runtime
// preempted the test between Unlock and Close: a fresh-clone CI run saw it) took its turn on an
// open Client, rightly nil, and is run again, up to 16 rounds for 8 that test the race.
func TestTurnAfterCloseIsErrClosed(t *testing.T) {
	e := newEnv(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := ctxT(t, 30*time.Second)
	tested := 0
	for i := 0; tested < 8; i++ {
		if i == 16 {
			t.Fatalf("only %d of 16 rounds had Close come before the waiter ran", tested)
		}
		c := e.client(t, Options{LeaseTime: time.Second})
		m := c.Mutex("closedturn")
		a, w := c.NewOwner(), c.NewOwner()
		if err := m.Lock(ctx, a); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() { got <- m.Lock(ctx, w) }()
		waitFor(t, func() bool { return c.localQueueLen("closedturn") == 1 })
		if err := m.Unlock(ctx, a); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-got:
			// The waiter ran before Close: a Lock on an open Client.
			if err != nil {
				t.Fatalf("round %d: Lock on an open Client: %v", i, err)
			}
			c.Close()
			e.do(t, "DEL", "closedturn")
			continue
		default:
		}
		tested++
		c.Close()
		if err := <-got; !errors.Is(err, ErrClosed) {
			t.Fatalf("round %d: Lock given its turn as the Client closed: %v, want ErrClosed (held by the table: %v)", i, err, func() bool { _, ok := m.HeldBy(w); return ok }())
		}
		if _, ok := m.HeldBy(w); ok {
			t.Fatalf("round %d: the table still records a hold no watchdog renews", i)
		}
		e.do(t, "DEL", "closedturn")
	}
}
