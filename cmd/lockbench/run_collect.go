package main

import (
	"github.com/lockbench/lockbench/collect"
	"github.com/spf13/pflag"
)

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

// check returns what is wrong with the group's flags for cmd, with procs generator processes,
// or "".
func (c *collectFlags) check(cmd string, procs int) string {
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
	if _, err := collect.Settings(collect.Options{Addr: c.addr, CAFile: c.caFile}); err != nil {
		return "--collect: " + err.Error()
	}
	if cmd == cmdRun && procs < 2 {
		return "--collect is where generator processes hand back their results: give --procs N (2 or more)"
	}
	return "" // a worker's --collect without --run: bench.WorkerSpec.Validate, checked before
}
