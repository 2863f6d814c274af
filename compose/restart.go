package compose

import (
	"context"
	"errors"
	"fmt"
)

// ErrStillRunning is wrapped by Restart's error when the server at the address has not exited:
// Restart brings back a server a fault killed, it does not bounce a live one.
var ErrStillRunning = errors.New("compose: server is still running")

// Restart starts the server again after it exited (a fault killed it): the same program and
// arguments, so the same port and configuration, in the same temp dir, whose files (a
// sentinel's or cluster node's rewritten config) it finds as it left them; its log is appended
// to. It waits until the server answers PING, bounded by ctx and DefaultStartTimeout. A
// replica, sentinel or cluster node rejoins its deployment as Redis decides (a restarted old
// master is turned into a replica by the sentinels). It fails, wrapping ErrStillRunning, if the
// server has not exited, and after Close. It is safe for concurrent use.
func (s *Single) Restart(ctx context.Context) error {
	s.mu.Lock()
	old := s.proc
	switch {
	case s.closed:
		s.mu.Unlock()
		return fmt.Errorf("compose: restart %s: %w", s.addr, errAdminClosed)
	case !old.exited():
		s.mu.Unlock()
		return fmt.Errorf("compose: restart %s (pid %d): %w", s.addr, old.pid(), ErrStillRunning)
	}
	p, err := startProcessIn(old.dir, old.cmd.Path, old.cmd.Args[1:], old.cpus)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	p.tls = old.tls
	s.proc = p // Close from now on stops p, and removes the dir p shares with old
	s.mu.Unlock()

	ctx, cancel := context.WithTimeoutCause(ctx, DefaultStartTimeout, &startTimeoutError{timeout: DefaultStartTimeout})
	defer cancel()
	if err := waitReady(ctx, p, s.addr); err != nil {
		return &startError{addr: s.addr, pid: p.pid(), cause: err, logTail: lastLines(p.log(), logTailLines)}
	}
	return nil
}

// restart restarts the node at addr (see Single.Restart).
func (l nodeList) restart(ctx context.Context, addr string) error {
	s := l.find(addr)
	if s == nil {
		return fmt.Errorf("%w: %s", ErrUnknownNode, addr)
	}
	return s.Restart(ctx)
}

// Restart starts the server or sentinel at addr again after a fault killed it, as
// Single.Restart does; the sentinels turn a restarted old master into a replica of the new one.
// It returns an error wrapping ErrUnknownNode if nothing was started at addr. It is safe for
// concurrent use.
func (s *Sentinel) Restart(ctx context.Context, addr string) error {
	if s.data.find(addr) != nil {
		return s.data.restart(ctx, addr)
	}
	return s.sentinels.restart(ctx, addr)
}

// Restart starts the node at addr again after a fault killed it, as Single.Restart does; it
// rejoins the cluster with its old identity (its nodes.conf is kept). It returns an error
// wrapping ErrUnknownNode if no node was started at addr. It is safe for concurrent use.
func (c *Cluster) Restart(ctx context.Context, addr string) error {
	return c.all().restart(ctx, addr)
}

// Restart starts the server at addr again after a fault killed it, as Single.Restart does. It
// returns an error wrapping ErrUnknownNode if no server was started at addr. It is safe for
// concurrent use.
func (m *Masters) Restart(ctx context.Context, addr string) error {
	return m.nodes.restart(ctx, addr)
}
