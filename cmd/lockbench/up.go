package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/kept"
	"github.com/lockbench/lockbench/target"
)

const upExamples = `
Examples:
  # A 3-master, 3-replica Redis Cluster on free loopback ports, until Ctrl-C:
  lockbench up --topology cluster

  # In the background: wait until it is up, benchmark it, stop it:
  lockbench up --topology cluster > /tmp/cluster.txt &
  until grep -q '^run' /tmp/cluster.txt; do sleep 0.2; done
  lockbench run --topology cluster --addr "$(awk '$1=="addr"{print $2}' /tmp/cluster.txt)"
  lockbench down

  # One master, two replicas and three sentinels, named so that a second up can run beside it:
  lockbench up --topology sentinel --master-name orders --name sent

  # Five independent masters for RedLock, in Docker containers instead of native processes:
  lockbench up --topology masters:5 --provider docker --image lockbench/redis:local

Output (stdout, one "key value" line each): name, topology, one "node ADDR ROLE" line per
node, "addr" with the comma-separated addresses clients dial (the sentinels for sentinel),
"master-name" for sentinel, and "run" with a lockbench run command line to copy. Logs go to
stderr. up keeps running until Ctrl-C, SIGTERM or 'lockbench down', then stops every node.
Exit codes: 0 stopped cleanly, 1 could not start (or the name is taken), 2 bad flags,
130 interrupted while starting.
`

func parseUpFlags(args []string, stdout, stderr io.Writer) (kept.UpOptions, int, bool) {
	fs := newCmdFlagSet("up", stderr)
	f := kept.UpFlags{Given: fs.Changed}
	fs.StringVar(&f.Topology, "topology", compose.KindSingle, "single, sentinel, cluster or masters:N (1 ≤ N ≤ 16)")
	fs.StringVar(&f.MasterName, "master-name", "", "sentinel master name (sentinel only; default "+compose.DefaultMasterName+")")
	fs.StringVar(&f.Provider, "provider", target.ProviderNative, "native (redis-server processes from PATH) or docker (containers of --image)")
	fs.StringVar(&f.Image, "image", docker.DefaultImage, "Redis image for --provider docker ('lockbench image build' makes "+docker.LocalImage+" from this machine's redis-server)")
	fs.StringVar(&f.Name, "name", kept.DefaultName, "name of this topology, so that several can run at once; down and status take it too")
	fs.StringVar(&f.Dir, "state-dir", kept.DefaultDir(), "directory of the state files that down and status read")
	fs.BoolVar(&f.Auth, "auth", false, "start every node with an ACL user and a random password (replication and sentinels included); the password goes to a file (0600) beside the state file, named in the run line, never printed")
	fs.BoolVar(&f.TLS, "tls", false, "start every node TLS only (replication, cluster bus and sentinels too), with certificates from a throwaway CA whose file the run line names")
	fs.StringVar(&f.CPUs, "server-cpus", "", "CPUs the redis-server processes run on (taskset list: 1, 2-3, 1,3); place the client with lockbench run --client-cpus on others")

	if code, done := fs.parse(args, stdout, "Usage: lockbench up [flags]\n\nStart a Redis topology for other tools to use, and keep it running until stopped.", upExamples); done {
		return kept.UpOptions{}, code, false
	}
	if fs.NArg() > 0 {
		return kept.UpOptions{}, fs.bad("unexpected argument %q", fs.Arg(0)), false
	}
	o, err := f.Options()
	if err != nil {
		return kept.UpOptions{}, fs.bad("%v", err), false
	}
	return o, exitOK, true
}

func upCommand(args []string, stdout, stderr io.Writer) int {
	o, code, ok := parseUpFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "lockbench up: "+format+"\n", a...) }

	// Signals are caught before anything is started, so that no Ctrl-C can leave a node behind.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := catchInterrupts(func(sig os.Signal) { logf("%v: stopping the topology (again to quit at once)", sig) }, cancel)
	defer in.release()

	interrupted, err := kept.Serve(ctx, o, stdout, logf, in.onHardStop)
	switch {
	case interrupted:
		return exitInterrupted
	case err != nil:
		return exitFailure
	}
	return exitOK
}
