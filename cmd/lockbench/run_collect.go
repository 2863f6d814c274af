package main

import (
	"fmt"
	"os"

	"github.com/lockbench/lockbench/collect"
	"github.com/spf13/pflag"
)

// EnvImage names the container image a worker runs in; its orchestrator sets it (the image's
// reference or id), and merge refuses workers of different images.
const envImage = "LOCKBENCH_IMAGE"

// collectFlags are --collect and --collect-ca-file (run with --procs, and worker), and the
// worker's --run: where generator processes hand back their results without a shared volume.
type collectFlags struct {
	addr   string
	caFile string
	runID  string
}

// add registers the group's flags for cmd (run or worker).
func (c *collectFlags) add(fs *pflag.FlagSet, cmd string) {
	if cmd == cmdRun {
		fs.StringVar(&c.addr, "collect", "", "with --procs: the generator processes store their results in this Redis (host:port, redis://, rediss://; password in the URL or "+collect.EnvPassword+") under the run's id, and lockbench fetches them from there instead of from files")
	} else {
		fs.StringVar(&c.addr, "collect", "", "store the result in this Redis (host:port, redis://, rediss://; password in the URL or "+collect.EnvPassword+") under --run, for 'lockbench merge --from': no volume shared by the nodes")
		fs.StringVar(&c.runID, "run", "", "the run's id, the same for every worker of one run (letters, digits, '.', '_', '-'); recorded in the result, and required with --collect")
	}
	fs.StringVar(&c.caFile, "collect-ca-file", "", "with --collect rediss://: the CA that signed the collection Redis' certificate (default: the system's roots)")
}

// check returns what is wrong with the group's flags, or "".
func (c *collectFlags) check(f *runFlags, cmd string) string {
	if c.runID != "" {
		if err := collect.CheckRunID(c.runID); err != nil {
			return "--run: " + err.Error()
		}
	}
	if c.addr == "" {
		if c.caFile != "" {
			return "--collect-ca-file needs --collect"
		}
		return ""
	}
	if _, err := collect.Settings(c.options()); err != nil {
		return "--collect: " + err.Error()
	}
	switch {
	case cmd == cmdRun && f.fleet.procs < 2:
		return "--collect is where generator processes hand back their results: give --procs N (2 or more)"
	case cmd == cmdWorker && c.runID == "":
		return "--collect needs --run ID: the id every worker of the run shares, for lockbench merge --from ADDR --run ID"
	}
	return ""
}

// options are the collect package's options.
func (c *collectFlags) options() collect.Options {
	return collect.Options{Addr: c.addr, CAFile: c.caFile}
}

// childArgs are the flags a generator process of run runID gets, and the environment that
// carries the store's password.
func (c *collectFlags) childArgs(runID string) (args, env []string, err error) {
	args = []string{"--run", runID}
	if c.addr == "" {
		return args, nil, nil
	}
	addr, env, err := collect.ChildArgs(c.options())
	if err != nil {
		return nil, nil, fmt.Errorf("--collect: %w", err)
	}
	args = append(args, "--collect", addr)
	if c.caFile != "" {
		args = append(args, "--collect-ca-file", c.caFile)
	}
	return args, env, nil
}

// image is the container image this worker runs in, as its orchestrator named it.
func workerImage() string { return os.Getenv(envImage) }
