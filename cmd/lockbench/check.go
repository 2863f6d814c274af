package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/progress"
	"github.com/lockbench/lockbench/target"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/workloads"
)

const checkExamples = `
Examples:
  # What a run against this Redis would be measured against, and what makes locks unsafe there:
  lockbench check --addr rediss://bench@redis.internal:6380 --password-file pass --tls-ca-file ca.crt

  # A sentinel deployment: the master and replicas the sentinels name:
  lockbench check --topology sentinel --addr 10.0.0.5:26379 --master-name orders

Output (stdout): one line per data node (version, mode, maxmemory and its policy, persistence,
replicas, maxclients, PING round trip), then a "warning:" line for each risk. lockbench run
records the same as the result file's "deployment".
Before the preflight, check asks the first master whether the user may use the keys of
--key-prefix (redis.acl_check_cmd, Redis 7.0+): a user whose keys are limited to another prefix
is refused, with the --key-prefix to use when it can be found.
Exit codes: 0 checked (warnings are advice), 1 the deployment did not answer, 2 bad input or a
deployment that is not what --topology says, is not a Redis server, or refuses the credentials,
TLS, database, INFO or the keys of --key-prefix.
`

// checkCommand is lockbench check: the preflight of a deployment, without a run.
func checkCommand(args []string, stdout, stderr io.Writer) int {
	f := &runFlags{}
	fs := newCmdFlagSet("check", stderr)
	f.deploy.RegisterAttached(fs.FlagSet)
	fs.IntVar(&f.cfg.Concurrency, "concurrency", 64, "workers per driver a run would have, for the maxclients check")
	fs.StringVar(&f.cfg.KeyPrefix, "key-prefix", workloads.DefaultKeyPrefix, "the --key-prefix a run would have: check asks the server whether the user may use its keys (ACL)")
	bad := fs.bad
	if code, done := fs.parse(args, stdout, "Usage: lockbench check --addr ADDR [flags]\n\nCheck a Redis deployment before measuring locks on it.", checkExamples); done {
		return code
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if !f.deploy.Attached() && fs.Changed("addr") {
		return bad("%s", target.EmptyAddr)
	}
	if !f.deploy.Attached() {
		return bad("give the deployment's --addr")
	}
	if err := f.deploy.CheckShape(fs.Changed); err != nil {
		return bad("%v", err)
	}
	if f.cfg.Concurrency < 1 {
		return bad("--concurrency %d must be at least 1", f.cfg.Concurrency)
	}
	f.deploy.Offline = flagsOnly(stdout)
	if err := f.deploy.CheckConn(fs.FlagSet, false); err != nil {
		return bad("%v", err)
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	ctx := context.Background()
	tgt, err := startTopology(ctx, f, progress.New(stderr), func(compose.Topology) {})
	if err != nil {
		fmt.Fprintf(stderr, "lockbench check: %v\n", err)
		if errors.Is(err, target.ErrBadSpec) {
			return exitUsage
		}
		return exitFailure
	}
	defer tgt.close()
	complete, err := bench.Preflight(ctx, tgt.Target, f.cfg.KeyPrefix, f.cfg.Concurrency, stdout)
	switch {
	case errors.Is(err, bench.ErrBadSpec):
		fmt.Fprintf(stderr, "lockbench check: %v\n", err)
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "lockbench check: %v\n", err)
		return exitFailure
	case !complete:
		return exitFailure
	}
	return exitOK
}
