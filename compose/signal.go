package compose

import (
	"errors"
	"fmt"
	"os"
)

// ErrExited is wrapped by Signal's error when the process at the address has exited: a signal
// meant for it must not reach whatever process reuses its id.
var ErrExited = errors.New("compose: server has exited")

// Signal sends sig to the server, for fault injection (SIGSTOP and SIGCONT pause and resume
// it). It fails, wrapping ErrExited, once the process has exited. It is safe for concurrent
// use.
func (s *Single) Signal(sig os.Signal) error {
	p := s.process()
	if p.exited() {
		return fmt.Errorf("compose: signal %s (pid %d): %w", s.addr, p.pid(), ErrExited)
	}
	// os.Process knows when its child is gone (a pidfd on Linux), so a late signal is refused
	// rather than sent to a reused pid.
	if err := p.cmd.Process.Signal(sig); err != nil {
		if errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("compose: signal %s (pid %d): %w", s.addr, p.pid(), ErrExited)
		}
		return fmt.Errorf("compose: signal %s (pid %d): %w", s.addr, p.pid(), err)
	}
	return nil
}

// Kill sends SIGKILL to the server and waits until it is gone, for fault injection; killing one
// already dead is not an error. It is safe for concurrent use.
func (s *Single) Kill() error { return nodeList{s}.kill(s.addr) }

// signal sends sig to the node at addr (see Single.Signal).
func (l nodeList) signal(addr string, sig os.Signal) error {
	s := l.find(addr)
	if s == nil {
		return fmt.Errorf("%w: %s", ErrUnknownNode, addr)
	}
	return s.Signal(sig)
}

// Signal sends sig to the server or sentinel started at addr, as Single.Signal does. It
// returns an error wrapping ErrUnknownNode if nothing was started at addr. It is safe for
// concurrent use.
func (s *Sentinel) Signal(addr string, sig os.Signal) error {
	if s.data.find(addr) != nil {
		return s.data.signal(addr, sig)
	}
	return s.sentinels.signal(addr, sig)
}

// Signal sends sig to the node started at addr, as Single.Signal does. It returns an error
// wrapping ErrUnknownNode if no node was started at addr. It is safe for concurrent use.
func (c *Cluster) Signal(addr string, sig os.Signal) error { return c.all().signal(addr, sig) }

// Signal sends sig to the server started at addr, as Single.Signal does. It returns an error
// wrapping ErrUnknownNode if no server was started at addr. It is safe for concurrent use.
func (m *Masters) Signal(addr string, sig os.Signal) error { return m.nodes.signal(addr, sig) }
