package fleet

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// ErrNotRunning is wrapped by Children's errors about a child that has not started or has
// ended.
var ErrNotRunning = errors.New("fleet: process not running")

// ErrNotStarted is wrapped by Children's errors about a child that has not started yet but may;
// it wraps ErrNotRunning.
var ErrNotStarted = fmt.Errorf("%w: not started yet", ErrNotRunning)

// Children gives the client faults of a run (lockbench run --fault pause-client) the running
// children of one Run, by index: Stop sends one SIGSTOP, Continue SIGCONT. Run fills it as the
// children start and empties it as each is waited for; signals go through the child's
// os.Process, never by a bare pid, so a pid reused after the child ended is never signalled.
// The zero value is ready to use; it is safe for concurrent use. Run also continues every
// child it interrupts, so a child stopped when the run ends is never left stopped.
type Children struct {
	mu    sync.Mutex
	procs map[int]*os.Process
	ended map[int]bool // children that ran and ended, or failed to start
}

func (c *Children) add(index int, p *os.Process) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.procs == nil {
		c.procs = make(map[int]*os.Process)
	}
	c.procs[index] = p
}

// remove forgets child index, which has ended or failed to start.
func (c *Children) remove(index int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.procs, index)
	if c.ended == nil {
		c.ended = make(map[int]bool)
	}
	c.ended[index] = true
}

func (c *Children) get(index int) (*os.Process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.procs[index]
	switch {
	case ok:
		return p, nil
	case c.ended[index]:
		return nil, fmt.Errorf("%w: process %d has ended", ErrNotRunning, index)
	}
	return nil, fmt.Errorf("%w: process %d", ErrNotStarted, index)
}

// Pid returns the pid of child index while it runs.
func (c *Children) Pid(index int) (int, error) {
	p, err := c.get(index)
	if err != nil {
		return 0, err
	}
	return p.Pid, nil
}

// Stop sends child index SIGSTOP: it stops, every thread of it, until Continue.
func (c *Children) Stop(index int) error {
	p, err := c.get(index)
	if err != nil {
		return err
	}
	return signalChild(p, index, syscall.SIGSTOP)
}

// Continue sends child index SIGCONT. A child that has ended meanwhile has nothing to continue,
// and is no error.
func (c *Children) Continue(index int) error {
	p, err := c.get(index)
	if errors.Is(err, ErrNotRunning) {
		return nil
	}
	if err := signalChild(p, index, syscall.SIGCONT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func signalChild(p *os.Process, index int, sig syscall.Signal) error {
	if err := p.Signal(sig); err != nil {
		if errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("%w: process %d (pid %d) has ended", ErrNotRunning, index, p.Pid)
		}
		return fmt.Errorf("fleet: %v to process %d (pid %d): %w", sig, index, p.Pid, err)
	}
	return nil
}
