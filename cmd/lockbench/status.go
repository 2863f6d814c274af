package main

import (
	"fmt"
	"io"
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
	healthy, err := kept.WriteStatus(stdout, f.stateDir, f.name, f.timeout)
	if err != nil {
		fmt.Fprintf(stderr, "lockbench status: %v\n", err)
		return exitFailure
	}
	if !healthy {
		return exitFailure
	}
	return exitOK
}
