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
// happen before the waiter runs, every round.
func TestTurnAfterCloseIsErrClosed(t *testing.T) {
	e := newEnv(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := ctxT(t, 30*time.Second)
	for i := range 8 {
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
