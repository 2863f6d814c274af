package generators

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/moby/moby/client"
)

// ErrNotRunning is wrapped by Containers' errors about a generator that has not started or has
// ended.
var ErrNotRunning = errors.New("generators: generator not running")

// ErrNotStarted is wrapped by Containers' errors about a generator whose container has not
// started yet but may: a loaded engine starts containers seconds apart, so a client fault waits
// for it (faults.ErrNotStarted). It wraps ErrNotRunning.
var ErrNotStarted = fmt.Errorf("%w: not started yet", ErrNotRunning)

// Containers gives the client faults of a run (lockbench run --fault pause-client) the generator
// containers of one Run, by index: Pause is docker pause (the cgroup freezer stops every
// process of the container at once), Unpause docker unpause. Run fills it as the containers
// start and empties it as each exits, and unpauses a paused one before it interrupts or removes
// it, so that no container is left paused. The zero value is ready to use; it is safe for
// concurrent use.
type Containers struct {
	mu     sync.Mutex
	cli    *dockerClient
	byIdx  map[int]*generator
	paused map[int]bool
	// ended holds the generators that ran and ended, or failed to start; closed says the run's
	// clean-up has begun: none of them will run (again).
	ended  map[int]bool
	closed bool
}

func (c *Containers) add(cli *dockerClient, g *generator) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byIdx == nil {
		c.byIdx, c.paused = make(map[int]*generator), make(map[int]bool)
	}
	c.cli = cli
	c.byIdx[g.index] = g
}

// remove forgets generator index, which has ended or failed to start.
func (c *Containers) remove(index int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byIdx, index)
	delete(c.paused, index)
	if c.ended == nil {
		c.ended = make(map[int]bool)
	}
	c.ended[index] = true
}

// running returns generator index while it runs; else an error wrapping ErrNotStarted (it may
// still start) or ErrNotRunning (it has ended, or never will). c.mu must be held.
func (c *Containers) running(index int) (*generator, error) {
	if g, ok := c.byIdx[index]; ok {
		return g, nil
	}
	if c.closed || c.ended[index] {
		return nil, fmt.Errorf("%w: generator %d has ended", ErrNotRunning, index)
	}
	return nil, fmt.Errorf("%w: generator %d", ErrNotStarted, index)
}

// Name returns generator index's container name while it runs.
func (c *Containers) Name(index int) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.running(index)
	if err != nil {
		return "", err
	}
	return g.name, nil
}

// Pause pauses generator index's container.
func (c *Containers) Pause(ctx context.Context, index int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.running(index)
	if err != nil {
		return err
	}
	// Marked before asking: a pause whose reply is lost (a timeout) may have frozen the
	// container all the same, and Unpause and Run's clean-up only unpause what is marked.
	c.paused[index] = true
	if _, err := c.cli.ContainerPause(ctx, g.id, client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("generators: docker pause %s: %w", g.name, err)
	}
	return nil
}

// Unpause unpauses generator index's container if Pause paused it, or tried to; a generator
// that has ended has nothing to unpause, and is no error.
func (c *Containers) Unpause(ctx context.Context, index int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.byIdx[index]
	if !ok || !c.paused[index] {
		return nil
	}
	if _, err := c.cli.ContainerUnpause(ctx, g.id, client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("generators: docker unpause %s: %w", g.name, err)
	}
	delete(c.paused, index)
	return nil
}

// unpauseAll unpauses every container Pause paused, and forgets them all: Run calls it before
// removing them, with a client it is about to close.
func (c *Containers) unpauseAll(ctx context.Context) {
	c.mu.Lock()
	idx := make([]int, 0, len(c.paused))
	for i := range c.paused {
		idx = append(idx, i)
	}
	c.mu.Unlock()
	for _, i := range idx {
		_ = c.Unpause(ctx, i)
	}
	c.mu.Lock()
	c.byIdx, c.paused, c.cli, c.closed = nil, nil, nil, true
	c.mu.Unlock()
}
