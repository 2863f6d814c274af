package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/referee"
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
// (extdriver.Check) against a Redis and a referee lockbench starts unless given.
func driverCheckCommand(args []string, stdout, stderr io.Writer) int {
	fs := newCmdFlagSet("driver-check", stderr)
	addr := fs.String("addr", "", "the Redis the adapter uses (host:port, redis://; password in "+conn.EnvPassword+"); default: one lockbench starts")
	ref := fs.String("referee", "", "the referee Redis, not the one under test; default: one lockbench starts")
	dur := fs.Duration("duration", extdriver.DefaultCheckDuration, "how long the exclusion rule's owners contend")
	owners := fs.Int("owners", extdriver.DefaultCheckOwners, "owners contending in the exclusion rule")
	if code, done := fs.parse(args, stdout, "Usage: lockbench driver-check [flags] ADAPTER\n\nCheck that an external-driver adapter keeps the lock's rules.", driverCheckExamples); done {
		return code
	}
	if fs.NArg() != 1 {
		return fs.bad("want one ADAPTER argument (quote the command), got %d", fs.NArg())
	}
	spec := fs.Arg(0)
	if !strings.HasPrefix(spec, extdriver.SchemePrefix+":") {
		spec = extdriver.SchemePrefix + ":adapter=" + spec
	}
	if _, err := extdriver.ParseSpec(spec); err != nil {
		return fs.bad("%v", err)
	}
	if *dur <= 0 || *owners < 2 {
		return fs.bad("--duration must be positive and --owners at least 2")
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	ctx := context.Background()
	var cfg drivers.Config
	if *addr == "" {
		s, err := compose.StartSingle(ctx, compose.NativeOptions{})
		if err != nil {
			fmt.Fprintf(stderr, "lockbench driver-check: starting a Redis: %v\n", err)
			return exitFailure
		}
		defer s.Close()
		*addr = s.Addr()
	}
	s, err := conn.New(conn.Options{Addrs: []string{*addr}})
	if err != nil {
		return fs.bad("--addr: %v", err)
	}
	cfg = drivers.Config{Topology: compose.KindSingle, Addrs: s.Addrs(), Conn: s}
	if *ref == "" {
		r, err := compose.StartSingle(ctx, compose.NativeOptions{})
		if err != nil {
			fmt.Fprintf(stderr, "lockbench driver-check: starting the referee: %v\n", err)
			return exitFailure
		}
		defer r.Close()
		*ref = r.Addr()
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	r, err := referee.Open(rctx, referee.Options{Addr: *ref, RunID: fmt.Sprintf("driver-check-%d", os.Getpid()), Process: "driver-check"})
	cancel()
	if err != nil {
		if errors.Is(err, referee.ErrBadInput) {
			return fs.bad("--referee: %v", err)
		}
		fmt.Fprintf(stderr, "lockbench driver-check: %v\n", err)
		return exitFailure
	}
	defer r.Close()
	fails, err := extdriver.Check(ctx, extdriver.CheckOptions{Spec: spec, Config: cfg, Marker: r, Duration: *dur, Owners: *owners, Out: stdout})
	if err != nil {
		return fs.bad("%v", err)
	}
	if res := r.Result(); res.Violations > 0 {
		fmt.Fprintf(stdout, "referee: %d mutual-exclusion violations, e.g. %s\n", res.Violations, strings.Join(res.Examples[:min(3, len(res.Examples))], "; "))
	}
	if len(fails) > 0 {
		fmt.Fprintf(stderr, "lockbench driver-check: %d rule(s) failed\n", len(fails))
		return exitFailure
	}
	return exitOK
}
