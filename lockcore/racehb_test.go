package lockcore

import (
	"testing"
	"time"
)

// Memory a lock protects is ordered by the lock for the race detector too, across clients: the
// order runs through Redis (a release written on one connection, the grant read on another),
// which the race detector sees only where the reads and writes tell it (package syscall's
// annotations; rawio's for lockcore's raw connections). A program run with -race that guards
// data with a lockcore lock taken from two clients must not be reported as racing.
func TestLockOrdersMemoryAcrossClients(t *testing.T) {
	e := newEnv(t)
	clients := []*Client{e.client(t, Options{}), e.client(t, Options{})}
	ctx := ctxT(t, 30*time.Second)
	shared := 0 // guarded by the lock "hb" alone
	const rounds = 50
	done := make(chan error, len(clients))
	for _, c := range clients {
		go func() {
			m, o := c.Mutex("hb"), c.NewOwner()
			for range rounds {
				if err := m.Lock(ctx, o); err != nil {
					done <- err
					return
				}
				shared++
				if err := m.Unlock(ctx, o); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range clients {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if shared != rounds*len(clients) {
		t.Fatalf("shared = %d after %d guarded increments", shared, rounds*len(clients))
	}
}
