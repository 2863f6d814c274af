package workloads

import (
	"strconv"

	"github.com/spf13/pflag"
)

// Register adds the flags of lockbench run that set c, each with its default from this
// package. On the command line a zero is what the user typed; the caller tells it from an unset
// flag by what fs says was changed (bench.Spec.Explicit). Config.Validate checks the values.
func (c *Config) Register(fs *pflag.FlagSet) {
	fs.IntVar(&c.Concurrency, "concurrency", DefaultConcurrency, "closed-loop workers, each its own lock owner; with --rate, the cap on attempts in flight")
	fs.IntVar(&c.Keys, "keys", DefaultKeys, "distinct lock names")
	fs.StringVar(&c.KeyDist, "key-dist", DefaultKeyDist, "key choice: uniform or zipf")
	fs.Float64Var(&c.ZipfS, "zipf-s", DefaultZipfS, "zipf exponent (> 1) for --key-dist zipf")
	fs.DurationVar(&c.Hold, "hold", 0, "time a lock is held before release (critical section)")
	fs.Float64Var(&c.ReadRatio, "read-ratio", DefaultReadRatio, "share of cycles that take a read hold, 0 to 1, for --workload rw (the rest write)")
	fs.IntVar(&c.Fanout, "fanout", DefaultFanout, "distinct keys each cycle locks at once, all or nothing, 1 to --keys, for --workload multilock")
	fs.Float64Var(&c.Rate, "rate", 0, "open loop: start attempts on a schedule of this many acquisitions/s over all workers, latency measured from each one's intended start (default: closed loop)")
	fs.StringVar(&c.Arrival, "arrival", "", "open-loop arrivals, with --rate: uniform (evenly spaced, the default) or poisson (exponential gaps, seeded by --seed)")
	fs.IntVar(&c.Depth, "depth", DefaultDepth, "nesting depth of --workload reentrancy: the same owner takes the lock this many times, then releases it as many, 1 to "+strconv.Itoa(MaxDepth))
	fs.DurationVar(&c.Duration, "duration", DefaultDuration, "length of the measured phase per run")
	fs.DurationVar(&c.Warmup, "warmup", DefaultWarmup, "unrecorded warm-up per run before measuring (0s: none)")
	fs.Int64Var(&c.Seed, "seed", DefaultSeed, "seed for key choices; equal seeds give equal key sequences")
	fs.StringVar(&c.KeyPrefix, "key-prefix", DefaultKeyPrefix, "prefix of every lock name (lock names are the prefix and a number); on an attached deployment (--addr) lockbench deletes only the keys of its own shapes for it (the locks, e.g. lockbench:7, and their helper keys: see docs/topologies.md), never a key that merely contains it, and refuses a prefix shorter than 3 characters or one that begins keys that are not lockbench's")
}
