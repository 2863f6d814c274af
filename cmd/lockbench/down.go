package main

import (
	"io"
	"time"

	"github.com/lockbench/lockbench/kept"
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
	fs := newCmdFlagSet("down", stderr)
	fs.StringVar(&f.name, "name", kept.DefaultName, "name given to lockbench up")
	fs.BoolVar(&f.all, "all", false, "stop every running topology")
	fs.StringVar(&f.stateDir, "state-dir", kept.DefaultDir(), "directory of the state files lockbench up writes")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "how long to wait for each topology to stop")

	bad := func(format string, a ...any) (*downFlags, int, bool) { return nil, fs.bad(format, a...), false }
	if code, done := fs.parse(args, stdout, "Usage: lockbench down [--name NAME | --all] [flags]\n\nStop a topology started by lockbench up.", downExamples); done {
		return nil, code, false
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if f.all && fs.Changed("name") {
		return bad("--name and --all exclude each other")
	}
	if err := kept.CheckName(f.name); err != nil {
		return bad("--%v", err)
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
	if err := kept.StopAll(stdout, f.stateDir, f.name, f.all, f.timeout); err != nil {
		printErrors(stderr, "down", err)
		return exitFailure
	}
	return exitOK
}
