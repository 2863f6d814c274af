// Package workloads decides what to lock (keys, distribution, hold time) and, through pacers,
// when; it drives any drivers.Locker and records into results.Recorder values.
package workloads

import (
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/pacing"
)

// Defaults for Config, written down once; the CLI shows them in --help.
const (
	DefaultConcurrency = 64
	DefaultKeys        = 10000
	DefaultKeyDist     = "uniform"
	DefaultZipfS       = 1.1
	DefaultDuration    = 10 * time.Second
	DefaultWarmup      = 2 * time.Second
	DefaultSeed        = 1
	DefaultKeyPrefix   = "lockbench:"
	// DefaultReadRatio is the share of rw cycles that read.
	DefaultReadRatio = 0.9
	// DefaultFanout is how many keys a multilock cycle takes at once (fewer if Keys is smaller).
	DefaultFanout = 3
	// MaxFanout bounds Fanout: a MultiLock takes its locks one call after another.
	MaxFanout = 1000
	// DefaultDepth is how deep a reentrancy cycle nests its acquisitions of one lock.
	DefaultDepth = 3
	// MaxDepth bounds Depth: every level is at least one round trip, and more checks its count.
	MaxDepth = 1000
	// DefaultReleaseTimeout bounds one release; a release is attempted even after the run's end.
	DefaultReleaseTimeout = 5 * time.Second
	// ErrorBackoff is how long a worker pauses after a failed acquire or release.
	ErrorBackoff = 10 * time.Millisecond
)

// Key distributions.
const (
	DistUniform = "uniform"
	DistZipf    = "zipf"
)

// ErrBadConfig wraps every validation error, so callers can map it to a usage exit code.
var ErrBadConfig = errors.New("bad workload config")

// Config is one workload run. The zero value of a field means its default (see Fill).
type Config struct {
	// Concurrency is the number of closed-loop workers, each its own lock owner.
	Concurrency int
	// Keys is the number of distinct lock names.
	Keys int
	// KeyDist is how workers pick keys: "uniform" or "zipf".
	KeyDist string
	// ZipfS is the zipf exponent (> 1) when KeyDist is "zipf"; larger is more skewed.
	ZipfS float64
	// Hold is how long a worker keeps a lock before releasing it (0: release at once).
	Hold time.Duration
	// Duration is the recorded phase's length.
	Duration time.Duration
	// Warmup runs before the recorded phase and is not recorded. Negative: no warm-up.
	Warmup time.Duration
	// Seed fixes every worker's key sequence.
	Seed int64
	// KeyPrefix is prepended to every lock name, to keep lockbench's keys apart.
	KeyPrefix string
	// ReadRatio is the probability that an rw cycle reads rather than writes, 0 to 1. Zero
	// means DefaultReadRatio; negative means no reads at all (Fill turns it into 0).
	ReadRatio float64
	// Fanout is how many distinct keys a multilock cycle takes, 1 to min(Keys, MaxFanout).
	// Zero means DefaultFanout, or Keys if fewer.
	Fanout int
	// Rate, when positive, runs an open loop (see OpenLoop): attempts start on a schedule of
	// Rate acquisitions/s summed over all workers, and Concurrency caps the attempts in flight.
	// Zero runs the closed loop.
	Rate float64
	// Arrival is the open loop's arrival process, pacing.Uniform or pacing.Poisson; empty
	// means pacing.DefaultArrival. It needs Rate.
	Arrival string
	// Shared, when set, holds the safety checkers' per-key state in memory other processes map
	// too, so that they see every process's holders (lockbench run --procs). Nil: private memory.
	Shared *Shared
	// Referee, when set, is told of every holder inside its critical section, by every process
	// of the run (lockbench run --referee). Nil: none.
	Referee Referee
	// Resource, when set, is written by every holder at the start and end of its critical
	// section (lockbench run --resource); only workloads that WritesResource take one. Nil:
	// none.
	Resource Resource
	// Depth is how many times a reentrancy cycle takes its lock, nested, 1 to MaxDepth. Zero
	// means DefaultDepth.
	Depth int

	// stall carries out Plan.Stalls during one Run; nil: none.
	stall *stallGate
}

// Fill sets defaults for zero fields.
func (c *Config) Fill() {
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Keys == 0 {
		c.Keys = DefaultKeys
	}
	if c.KeyDist == "" {
		c.KeyDist = DefaultKeyDist
	}
	if c.ZipfS == 0 {
		c.ZipfS = DefaultZipfS
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Warmup == 0 {
		c.Warmup = DefaultWarmup
	}
	if c.Warmup < 0 {
		c.Warmup = 0
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	if c.ReadRatio == 0 {
		c.ReadRatio = DefaultReadRatio
	}
	if c.ReadRatio < 0 {
		c.ReadRatio = 0
	}
	if c.Fanout == 0 {
		c.Fanout = min(DefaultFanout, c.Keys)
	}
	if c.Rate > 0 && c.Arrival == "" {
		c.Arrival = pacing.DefaultArrival
	}
	if c.Depth == 0 {
		c.Depth = DefaultDepth
	}
}

// Validate reports the first invalid field, wrapping ErrBadConfig.
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Concurrency < 1 || c.Concurrency > 100000:
		return bad("concurrency %d: want 1..100000", c.Concurrency)
	case c.Keys < 1 || c.Keys > 10_000_000:
		return bad("keys %d: want 1..10000000", c.Keys)
	case c.KeyDist != DistUniform && c.KeyDist != DistZipf:
		return bad("key distribution %q: want %q or %q", c.KeyDist, DistUniform, DistZipf)
	case c.KeyDist == DistZipf && !(c.ZipfS > 1):
		return bad("zipf exponent %v: want > 1", c.ZipfS)
	case c.Hold < 0:
		return bad("hold %v: must not be negative", c.Hold)
	case c.Duration <= 0:
		return bad("duration %v: must be positive", c.Duration)
	case !(c.ReadRatio >= 0 && c.ReadRatio <= 1): // NaN too
		return bad("read ratio %v: want 0..1", c.ReadRatio)
	case c.Fanout < 1 || c.Fanout > min(c.Keys, MaxFanout):
		return bad("fanout %d: want 1..%d (at most the number of keys, and %d)", c.Fanout, min(c.Keys, MaxFanout), MaxFanout)
	case c.Rate == 0 && c.Arrival != "":
		return bad("arrival %q needs a rate: arrivals pace an open loop", c.Arrival)
	case c.Depth < 1 || c.Depth > MaxDepth:
		return bad("depth %d: want 1..%d", c.Depth, MaxDepth)

	case c.Rate != 0:
		if err := pacing.Check(c.Rate, c.Arrival); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}
