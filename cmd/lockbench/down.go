package main

import (
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/kept"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

const downExamples = `
Examples:
  # Stop the topology of 'lockbench up' (name "default"):
  lockbench down

  # Stop the one started with 'lockbench up --name sent':
  lockbench down --name sent

  # Stop every topology lockbench up started for this user:
  lockbench down --all

down sends SIGTERM to the 'lockbench up' process, which stops its nodes, and waits until
they are gone. A state file whose up process is gone is removed. Only a process that is
still a 'lockbench up' is signalled: a recycled pid is never touched.
Exit codes: 0 stopped (or nothing was running), 1 could not stop something, 2 bad flags.
`

// downFlags are the parsed flags of lockbench down.
type downFlags struct {
	name     string
	all      bool
	stateDir string
	timeout  time.Duration
}

func parseDownFlags(args []string, stdout, stderr io.Writer) (*downFlags, int, bool) {
	f := &downFlags{}
	fs := pflag.NewFlagSet("lockbench down", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.name, "name", kept.DefaultName, "name given to lockbench up")
	fs.BoolVar(&f.all, "all", false, "stop every running topology")
	fs.StringVar(&f.stateDir, "state-dir", kept.DefaultDir(), "directory of the state files lockbench up writes")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "how long to wait for each topology to stop")
	help := fs.BoolP("help", "h", false, "show this help")

	bad := func(format string, a ...any) (*downFlags, int, bool) {
		fmt.Fprintf(stderr, "lockbench down: "+format+"\nRun 'lockbench down --help' for usage.\n", a...)
		return nil, exitUsage, false
	}
	if err := fs.Parse(args); err != nil {
		return bad("%v", err)
	}
	if *help {
		fmt.Fprintf(stdout, "Usage: lockbench down [--name NAME | --all] [flags]\n\nStop a topology started by lockbench up.\n\nFlags:\n%s%s", fs.FlagUsages(), downExamples)
		return nil, exitOK, false
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if f.all && fs.Changed("name") {
		return bad("--name and --all exclude each other")
	}
	if err := checkName(f.name); err != nil {
		return bad("%v", err)
	}
	if f.timeout <= 0 {
		return bad("--timeout %v must be positive", f.timeout)
	}
	if f.stateDir == "" {
		return bad("--state-dir must not be empty")
	}
	return f, exitOK, true
}

func downCommand(args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseDownFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	var paths []string
	if f.all {
		var err error
		if paths, err = kept.Files(f.stateDir); err != nil {
			fmt.Fprintf(stderr, "lockbench down: %v\n", err)
			return exitFailure
		}
	} else if _, err := os.Stat(kept.Path(f.stateDir, f.name)); err == nil {
		paths = []string{kept.Path(f.stateDir, f.name)}
	}
	if len(paths) == 0 {
		if f.all {
			fmt.Fprintln(stdout, "nothing running")
		} else {
			fmt.Fprintf(stdout, "nothing running as %q\n", f.name)
		}
		return exitOK
	}
	code = exitOK
	for _, p := range paths {
		msg, err := stopUp(p, f.timeout)
		if err != nil {
			fmt.Fprintf(stderr, "lockbench down: %v\n", err)
			code = exitFailure
			continue
		}
		fmt.Fprintln(stdout, msg)
	}
	return code
}

// stopUp stops the up that owns the state file at path and waits, up to timeout, until it and
// its node processes are gone. It returns what it did, for the user.
func stopUp(path string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	st, err := kept.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("nothing running as %q (it stopped meanwhile)", kept.NameOf(path)), nil
	}
	if err != nil {
		// Writes are atomic, so an unreadable file was not written by up: nothing owns it.
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return "", rerr
		}
		return fmt.Sprintf("removed unreadable state file %s (%v)", path, err), nil
	}

	err = kept.Signal(st.Pid, syscall.SIGTERM, kept.UpAlive)
	switch {
	case errors.Is(err, os.ErrProcessDone):
		msg := fmt.Sprintf("removed stale state of %q: its up process (pid %d) is gone", st.Name, st.Pid)
		if n, err := stopLeftoverNodes(st, deadline); err != nil {
			return "", err
		} else if n > 0 {
			msg += fmt.Sprintf("; stopped %d leftover node processes", n)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return msg, nil
	case err != nil:
		return "", fmt.Errorf("%q: signal up process %d: %w", st.Name, st.Pid, err)
	}

	// up removes its state file after its nodes are stopped, then exits.
	for {
		upGone := !kept.UpAlive(st.Pid)
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
			return "", fmt.Errorf("%q: up process %d did not stop within %v", st.Name, st.Pid, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if left := waitNodesGone(st, deadline); len(left) > 0 {
		return "", fmt.Errorf("%q: node processes %v still running %v after up stopped", st.Name, left, timeout)
	}
	return fmt.Sprintf("stopped %q: %s", st.Name, describeState(st)), nil
}

// stopLeftoverNodes stops node processes that outlived their up (possible where the kernel
// cannot kill them with their parent) and reports how many it stopped.
func stopLeftoverNodes(st kept.State, deadline time.Time) (int, error) {
	n := 0
	for _, pid := range st.NodePids {
		check := func(pid int) bool { return kept.NodeAlive(st, pid) }
		if kept.Signal(pid, syscall.SIGTERM, check) == nil {
			n++
		}
	}
	if left := waitNodesGone(st, deadline); len(left) > 0 {
		return n, fmt.Errorf("%q: leftover node processes %v did not stop", st.Name, left)
	}
	return n, nil
}

// waitNodesGone waits until deadline for st's node processes to be gone and returns those
// still running.
func waitNodesGone(st kept.State, deadline time.Time) []int {
	for {
		var left []int
		for _, pid := range st.NodePids {
			if kept.NodeAlive(st, pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// describeState says what an up runs, e.g. `cluster (native), 6 nodes, up pid 4242`.
func describeState(st kept.State) string {
	s := fmt.Sprintf("%s (%s)", st.Topology, st.Provider)
	if st.Description != nil {
		s += fmt.Sprintf(", %d node", len(st.Description.Nodes))
		if len(st.Description.Nodes) != 1 {
			s += "s"
		}
	} else {
		s += ", still starting"
	}
	return s + fmt.Sprintf(", up pid %d", st.Pid)
}
