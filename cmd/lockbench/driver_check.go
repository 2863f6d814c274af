package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/extdriver"
)

const driverCheckExamples = `
ADAPTER is an exec driver spec, 'exec:NAME=COMMAND', or a bare COMMAND (see docs/external-drivers.md).

Examples:
  lockbench driver-check 'exec:redis-py=/usr/bin/python3 adapters/redispy_lock.py'
  lockbench driver-check --addr 10.0.0.5:6379 '/tmp/redsync-adapter'

Output (stdout): one line per rule, "ok   RULE" or "FAIL RULE: OPERATION: what happened". Rules:
hello, exclusion (checked by a referee), non-owner-release, wait-timeout, reentrant, rw, multi
and fenced (each when the hello claims it), lease-expiry, shutdown.
Exit codes: 0 every rule held, 1 a rule failed (or no Redis could be started), 2 bad input.
`

// driverCheckCommand is lockbench driver-check: the external-driver conformance check
// (extdriver.RunCheck) against a Redis and a referee lockbench starts unless given.
func driverCheckCommand(args []string, stdout, stderr io.Writer) int {
	fs := newCmdFlagSet("driver-check", stderr)
	r := extdriver.CheckRun{Out: stdout}
	fs.StringVar(&r.Addr, "addr", "", "the Redis the adapter uses (host:port, redis://; password in "+conn.EnvPassword+"); default: one lockbench starts")
	fs.StringVar(&r.Referee, "referee", "", "the referee Redis, not the one under test; default: one lockbench starts")
	fs.DurationVar(&r.Duration, "duration", extdriver.DefaultCheckDuration, "how long the exclusion rule's owners contend")
	fs.IntVar(&r.Owners, "owners", extdriver.DefaultCheckOwners, "owners contending in the exclusion rule")
	if code, done := fs.parse(args, stdout, "Usage: lockbench driver-check [flags] ADAPTER\n\nCheck that an external-driver adapter keeps the lock's rules.", driverCheckExamples); done {
		return code
	}
	if fs.NArg() != 1 {
		return fs.bad("want one ADAPTER argument (quote the command), got %d", fs.NArg())
	}
	r.Adapter = fs.Arg(0)
	if err := r.Validate(); err != nil {
		return fs.bad("%v", err)
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	fails, err := extdriver.RunCheck(context.Background(), r)
	switch {
	case errors.Is(err, extdriver.ErrBadCheck):
		return fs.bad("%v", err)
	case err != nil:
		fmt.Fprintf(stderr, "lockbench driver-check: %v\n", err)
		return exitFailure
	case len(fails) > 0:
		fmt.Fprintf(stderr, "lockbench driver-check: %d rule(s) failed\n", len(fails))
		return exitFailure
	}
	return exitOK
}
