package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/lockbench/lockbench/kept"
)

const statusExamples = `
Examples:
  # Every topology lockbench up runs for this user, each node PINGed:
  lockbench status

  # Only the one started with --name sent; usable as a readiness check in scripts:
  until lockbench status --name sent >/dev/null; do sleep 1; done

Output (stdout): per topology a line "NAME TOPOLOGY PROVIDER pid PID up UPTIME", then one
line per node with its address, role and "ok" or "DOWN (reason)", then "addr" and "run"
lines as lockbench up prints them.
Exit codes: 0 every node answers PING (or nothing is running), 1 a node is down, a topology
is still starting or its up process is gone, 2 bad flags.
`

// statusFlags are the parsed flags of lockbench status.
type statusFlags struct {
	name     string
	stateDir string
	timeout  time.Duration
}

func parseStatusFlags(args []string, stdout, stderr io.Writer) (*statusFlags, int, bool) {
	f := &statusFlags{}
	fs := newCmdFlagSet("status", stderr)
	fs.StringVar(&f.name, "name", "", "show only the topology of this lockbench up --name (default: all)")
	fs.StringVar(&f.stateDir, "state-dir", kept.DefaultDir(), "directory of the state files lockbench up writes")
	fs.DurationVar(&f.timeout, "timeout", time.Second, "how long each node has to answer PING")

	bad := func(format string, a ...any) (*statusFlags, int, bool) { return nil, fs.bad(format, a...), false }
	if code, done := fs.parse(args, stdout, "Usage: lockbench status [--name NAME] [flags]\n\nList the topologies lockbench up runs and whether each node answers PING.", statusExamples); done {
		return nil, code, false
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if f.name != "" {
		if err := kept.CheckName(f.name); err != nil {
			return bad("--%v", err)
		}
	}
	if f.timeout <= 0 {
		return bad("--timeout %v must be positive", f.timeout)
	}
	if f.stateDir == "" {
		return bad("--state-dir must not be empty")
	}
	return f, exitOK, true
}

func statusCommand(args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseStatusFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	paths, err := kept.Files(f.stateDir)
	if err != nil {
		fmt.Fprintf(stderr, "lockbench status: %v\n", err)
		return exitFailure
	}
	if f.name != "" {
		paths = []string{kept.Path(f.stateDir, f.name)}
	}
	healthy, shown := true, 0
	for _, p := range paths {
		st, err := kept.Read(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		shown++
		if err != nil {
			fmt.Fprintf(stdout, "%s  unreadable state file: %v\n", kept.NameOf(p), err)
			healthy = false
			continue
		}
		healthy = showStatus(stdout, st, f.timeout) && healthy
	}
	if shown == 0 {
		if f.name != "" {
			fmt.Fprintf(stdout, "nothing running as %q\n", f.name)
		} else {
			fmt.Fprintln(stdout, "nothing running")
		}
		return exitOK
	}
	if !healthy {
		return exitFailure
	}
	return exitOK
}

// showStatus prints one topology and reports whether its up runs and every node answers.
func showStatus(w io.Writer, st kept.State, timeout time.Duration) bool {
	h := kept.Check(st, timeout)
	head := fmt.Sprintf("%s  %s  %s  pid %d", st.Name, st.Topology, st.Provider, st.Pid)
	switch h.Phase {
	case kept.Dead:
		fmt.Fprintf(w, "%s  STALE: the up process is gone; 'lockbench down --name %s' cleans up\n", head, st.Name)
		return false
	case kept.Starting:
		fmt.Fprintf(w, "%s  starting for %v\n", head, time.Since(st.Started).Round(time.Second))
		return false
	}
	fmt.Fprintf(w, "%s  up %v\n", head, time.Since(st.Ready).Round(time.Second))
	for i, n := range st.Description.Nodes {
		state := "ok"
		if err := h.Nodes[i]; err != nil {
			state = fmt.Sprintf("DOWN (%v)", err)
		}
		fmt.Fprintf(w, "  %-21s %-8s %s\n", n.Addr, n.Role, state)
	}
	fmt.Fprintf(w, "  addr %s\n", strings.Join(st.Addrs, ","))
	fmt.Fprintf(w, "  run  %s\n", st.RunLine())
	return h.OK()
}
