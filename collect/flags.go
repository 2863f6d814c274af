package collect

import "github.com/spf13/pflag"

// Flags are --collect and --collect-ca-file (lockbench run with --procs, and worker), and the
// worker's --run: where generator processes hand back their results without a shared volume.
// A Flags is used by one goroutine.
type Flags struct {
	Addr, CAFile string
	RunID        string // the worker's --run
}

// Register adds the flags of lockbench run (worker false) or of lockbench worker to fs.
func (c *Flags) Register(fs *pflag.FlagSet, worker bool) {
	if !worker {
		fs.StringVar(&c.Addr, "collect", "", "with --procs: the generator processes store their results in this Redis (host:port, redis://, rediss://; password in the URL or "+EnvPassword+") under the run's id, and lockbench fetches them from there instead of from files")
	} else {
		fs.StringVar(&c.Addr, "collect", "", "store the result in this Redis (host:port, redis://, rediss://; password in the URL or "+EnvPassword+") under --run, for 'lockbench merge --from': no volume shared by the nodes")
		fs.StringVar(&c.RunID, "run", "", "the run's id, the same for every worker of one run (letters, digits, '.', '_', '-'); recorded in the result, and required with --collect")
	}
	fs.StringVar(&c.CAFile, "collect-ca-file", "", "with --collect rediss://: the CA that signed the collection Redis' certificate (default: the system's roots)")
}

// Options are where the flags say results are collected.
func (c *Flags) Options() Options { return Options{Addr: c.Addr, CAFile: c.CAFile} }

// Check returns what is wrong with the flags of lockbench run (worker false) with procs
// generator processes, or of a worker, as an error wrapping ErrBadInput whose text is the
// complaint alone. A worker's --collect without --run is its spec's to refuse
// (bench.WorkerSpec.Validate).
func (c *Flags) Check(worker bool, procs int) error {
	if c.RunID != "" {
		if err := CheckRunID(c.RunID); err != nil {
			return flagError("--run: " + err.Error())
		}
	}
	if c.Addr == "" {
		if c.CAFile != "" {
			return flagError("--collect-ca-file needs --collect")
		}
		return nil
	}
	if _, err := Settings(c.Options()); err != nil {
		return flagError("--collect: " + err.Error())
	}
	if !worker && procs < 2 {
		return flagError("--collect is where generator processes hand back their results: give --procs N (2 or more)")
	}
	return nil
}

// flagError is a complaint about a flag: its text alone, wrapping ErrBadInput.
type flagError string

func (e flagError) Error() string        { return string(e) }
func (e flagError) Is(target error) bool { return target == ErrBadInput }
