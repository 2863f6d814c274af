package kept

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// ErrNotStopped is wrapped by Stop's error when an up or its node processes are still running
// at the deadline.
var ErrNotStopped = errors.New("did not stop")

// Outcome is what Stop found and did.
type Outcome int

// Stop's outcomes.
const (
	// Gone: the state file was gone before Stop read it; nothing ran.
	Gone Outcome = iota
	// Unreadable: the file was not a state file (up writes atomically, so no up wrote it); it
	// was removed.
	Unreadable
	// Stale: the up process was gone; leftover node processes were stopped and the file removed.
	Stale
	// Stopped: the up was signalled and it stopped its nodes and removed its file.
	Stopped
)

// Stopping is what Stop did to one state file. Its String is the line lockbench down prints.
type Stopping struct {
	Outcome Outcome
	// Path is the state file.
	Path string
	// State is the file's content (Stale, Stopped).
	State State
	// ReadErr is why the file could not be read (Unreadable).
	ReadErr error
	// Leftover counts the node processes of a Stale up that Stop signalled.
	Leftover int
}

// String says what Stop did, for the user.
func (s Stopping) String() string {
	switch s.Outcome {
	case Unreadable:
		return fmt.Sprintf("removed unreadable state file %s (%v)", s.Path, s.ReadErr)
	case Stale:
		msg := fmt.Sprintf("removed stale state of %q: its up process (pid %d) is gone", s.State.Name, s.State.Pid)
		if s.Leftover > 0 {
			msg += fmt.Sprintf("; stopped %d leftover node processes", s.Leftover)
		}
		return msg
	case Stopped:
		return fmt.Sprintf("stopped %q: %s", s.State.Name, s.State.Summary())
	}
	return fmt.Sprintf("nothing running as %q (it stopped meanwhile)", NameOf(s.Path))
}

// pollInterval is how often Stop looks whether processes are gone.
const pollInterval = 20 * time.Millisecond

// Stop stops the up that owns the state file at path and waits, up to timeout, until it and its
// node processes are gone. Only a process that is still a `lockbench up` (UpAlive) is
// signalled, and only node processes that are still the state's (NodeAlive): a recycled pid is
// never touched. A file whose up is gone is removed, after its leftover nodes are stopped. An
// error that is a timeout wraps ErrNotStopped.
func Stop(path string, timeout time.Duration) (Stopping, error) {
	deadline := time.Now().Add(timeout)
	st, err := Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Stopping{Outcome: Gone, Path: path}, nil
	}
	if err != nil {
		// Writes are atomic, so an unreadable file was not written by up: nothing owns it.
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return Stopping{}, rerr
		}
		return Stopping{Outcome: Unreadable, Path: path, ReadErr: err}, nil
	}

	err = Signal(st.Pid, syscall.SIGTERM, UpAlive)
	switch {
	case errors.Is(err, os.ErrProcessDone):
		n, err := stopLeftoverNodes(st, deadline)
		if err != nil {
			return Stopping{}, err
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Stopping{}, err
		}
		return Stopping{Outcome: Stale, Path: path, State: st, Leftover: n}, nil
	case err != nil:
		return Stopping{}, fmt.Errorf("%q: signal up process %d: %w", st.Name, st.Pid, err)
	}

	// up removes its state file after its nodes are stopped, then exits.
	for {
		upGone := !UpAlive(st.Pid)
		_, serr := os.Stat(path)
		fileGone := errors.Is(serr, fs.ErrNotExist)
		if upGone && !fileGone {
			os.Remove(path) // it died without cleaning up after itself
			fileGone = true
		}
		if upGone && fileGone {
			break
		}
		if time.Now().After(deadline) {
			return Stopping{}, notStopped("%q: up process %d did not stop within %v", st.Name, st.Pid, timeout)
		}
		time.Sleep(pollInterval)
	}
	if left := waitNodesGone(st, deadline); len(left) > 0 {
		return Stopping{}, notStopped("%q: node processes %v still running %v after up stopped", st.Name, left, timeout)
	}
	return Stopping{Outcome: Stopped, Path: path, State: st}, nil
}

// stopLeftoverNodes stops node processes that outlived their up (possible where the kernel
// cannot kill them with their parent) and reports how many it signalled.
func stopLeftoverNodes(st State, deadline time.Time) (int, error) {
	n := 0
	check := func(pid int) bool { return NodeAlive(st, pid) }
	for _, pid := range st.NodePids {
		if Signal(pid, syscall.SIGTERM, check) == nil {
			n++
		}
	}
	if left := waitNodesGone(st, deadline); len(left) > 0 {
		return n, notStopped("%q: leftover node processes %v did not stop", st.Name, left)
	}
	return n, nil
}

// waitNodesGone waits until deadline for st's node processes to be gone and returns those
// still running.
func waitNodesGone(st State, deadline time.Time) []int {
	for {
		var left []int
		for _, pid := range st.NodePids {
			if NodeAlive(st, pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(pollInterval)
	}
}

// notStoppedError is a timeout of Stop: its text says which processes, and it is ErrNotStopped.
type notStoppedError struct{ text string }

func notStopped(format string, a ...any) error {
	return &notStoppedError{fmt.Sprintf(format, a...)}
}

func (e *notStoppedError) Error() string { return e.text }
func (e *notStoppedError) Unwrap() error { return ErrNotStopped }
