package generators

import (
	"context"
	"errors"
	"testing"
)

// Containers tells a generator not started yet (ErrNotStarted: a client fault waits for it)
// from one that has ended, failed to start, or whose run is being cleaned up (ErrNotRunning
// only: the fault fails). No engine is needed: nothing here reaches one.
func TestContainersNotStartedOrEnded(t *testing.T) {
	c := &Containers{}
	if _, err := c.Name(0); !errors.Is(err, ErrNotStarted) || !errors.Is(err, ErrNotRunning) {
		t.Errorf("before the start: %v; want ErrNotStarted, which is ErrNotRunning", err)
	}
	if err := c.Pause(context.Background(), 0); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Pause before the start: %v; want ErrNotStarted", err)
	}
	c.add(nil, &generator{index: 0, name: "gen-0"})
	if name, err := c.Name(0); err != nil || name != "gen-0" {
		t.Errorf("running: %q, %v; want gen-0", name, err)
	}
	c.remove(0)
	c.remove(1) // failed to start
	for i := range 2 {
		if _, err := c.Name(i); !errors.Is(err, ErrNotRunning) || errors.Is(err, ErrNotStarted) {
			t.Errorf("generator %d ended: %v; want ErrNotRunning, not ErrNotStarted", i, err)
		}
	}
	c.unpauseAll(context.Background())
	if _, err := c.Name(2); !errors.Is(err, ErrNotRunning) || errors.Is(err, ErrNotStarted) {
		t.Errorf("after the clean-up: %v; want ErrNotRunning, not ErrNotStarted", err)
	}
}
