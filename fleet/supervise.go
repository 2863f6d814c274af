// Package fleet starts and supervises the generator processes of one run (lockbench run
// --procs): N child processes of lockbench that start together at a common time, each with its
// own driver clients and its own result file, that die with the parent, stop on its interrupt,
// and whose crash leaves the others' results intact. RunShared adds the cross-process safety
// checker and merges the results.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// DefaultStopGrace is how long an interrupted child has, after SIGINT, to release its locks and
// write what it measured before it is killed: the workloads' release timeout and then some.
const DefaultStopGrace = 15 * time.Second

// Procs describes the processes to start. It is a plain value.
type Procs struct {
	// Path is the executable, usually os.Executable().
	Path string
	// Args returns process index's arguments (without the program name).
	Args func(index int) []string
	// N is the number of processes, at least 1.
	N int
	// Env is added to this process's environment for every child.
	Env []string
	// Stderr receives the children's standard error, each line prefixed with "[proc i] "; nil
	// discards it. Children's standard output is discarded: they write results to files.
	Stderr io.Writer
	// StopGrace is how long a child has after SIGINT before SIGKILL (DefaultStopGrace if 0).
	StopGrace time.Duration
	// Started, if set, is called with each child's index and pid once it has started.
	Started func(index, pid int)
	// Children, if set, is filled with the children while they run, so that a client fault
	// can stop and continue them (see Children).
	Children *Children
}

// Exit is how one child ended. It is a plain value.
type Exit struct {
	Index int
	Pid   int
	// Err is nil for exit status 0; else why it failed to start, its exit status or its signal.
	Err error
	// Code is the exit status, -1 when killed by a signal or not started.
	Code int
	// Signal is the signal that killed it, if one did.
	Signal syscall.Signal
}

// Crashed reports whether the child died of a signal or never started: it wrote no result,
// where a child that exited with a status did (a failed run still writes one).
func (e Exit) Crashed() bool { return e.Code < 0 }

func (e Exit) String() string {
	switch {
	case e.Err == nil:
		return fmt.Sprintf("process %d (pid %d) exited 0", e.Index, e.Pid)
	case e.Signal != 0:
		return fmt.Sprintf("process %d (pid %d) was killed by %v", e.Index, e.Pid, e.Signal)
	case e.Pid == 0:
		return fmt.Sprintf("process %d did not start: %v", e.Index, e.Err)
	}
	return fmt.Sprintf("process %d (pid %d) exited %d", e.Index, e.Pid, e.Code)
}

// Run starts the N processes and waits until all have ended. When ctx ends it sends each child
// still running one SIGINT, as Ctrl-C would, and SIGCONT, in case a client fault stopped it (the children run in their own process group, so a
// terminal's Ctrl-C reaches only this process, which forwards it once), and SIGKILL after
// StopGrace. On Linux every child also gets SIGKILL when this process dies (Pdeathsig), so
// killing the parent leaves no orphan. It returns one Exit per process, by index. It is safe
// for concurrent use.
func Run(ctx context.Context, p Procs) []Exit {
	grace := p.StopGrace
	if grace <= 0 {
		grace = DefaultStopGrace
	}
	// Pdeathsig fires when the thread that started a child exits, not the process; the runtime
	// ends a thread when a goroutine locked to it returns. Starting every child from this
	// goroutine, locked to its thread until they have all ended, keeps that thread alive as
	// long as they are.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	exits := make([]Exit, p.N)
	var wg sync.WaitGroup
	var stderrMu sync.Mutex
	for i := range p.N {
		exits[i] = Exit{Index: i, Code: -1}
		cmd := exec.Command(p.Path, p.Args(i)...)
		cmd.Env = append(os.Environ(), p.Env...)
		cmd.SysProcAttr = childAttr()
		var pw *prefixWriter
		if p.Stderr != nil {
			pw = &prefixWriter{w: p.Stderr, mu: &stderrMu, prefix: fmt.Sprintf("[proc %d] ", i)}
			cmd.Stderr = pw
		}
		if err := cmd.Start(); err != nil {
			exits[i].Err = err
			if p.Children != nil {
				p.Children.remove(i) // a fault waiting for it to start stops waiting
			}
			continue
		}
		exits[i].Pid = cmd.Process.Pid
		if p.Children != nil {
			p.Children.add(i, cmd.Process)
		}
		if p.Started != nil {
			p.Started(i, cmd.Process.Pid)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan struct{})
			go func() {
				select {
				case <-ctx.Done():
					_ = cmd.Process.Signal(os.Interrupt)
					// A child a client fault stopped (SIGSTOP) would keep the interrupt
					// pending until killed after the grace, and write nothing: continue it.
					_ = cmd.Process.Signal(syscall.SIGCONT)
					select {
					case <-time.After(grace):
						_ = cmd.Process.Kill()
					case <-done:
					}
				case <-done:
				}
			}()
			err := cmd.Wait()
			if p.Children != nil {
				p.Children.remove(i)
			}
			close(done)
			if pw != nil {
				pw.flush()
			}
			exits[i].Err = err
			exits[i].Code = cmd.ProcessState.ExitCode()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				exits[i].Signal = ws.Signal()
			}
		}()
	}
	wg.Wait()
	return exits
}

// ErrAllLost is returned by RunShared when no process left a result.
var ErrAllLost = errors.New("fleet: no process left a result")
