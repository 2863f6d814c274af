// Package drivers adapts lock libraries to one small interface so that workloads can drive any of
// them side by side. Each adapter lives in its own file and registers itself in init.
package drivers

import (
	"context"
	"errors"
	"time"
)

// Kind is a bit set of lock kinds a driver supports.
type Kind uint32

// Lock kinds. A workload names the kinds it needs; a driver lists the kinds it has.
const (
	// KindMutex is an exclusive lock taken and released once per hold.
	KindMutex Kind = 1 << iota
	// KindReentrant is an exclusive lock the same owner may take again while holding it.
	KindReentrant
)

// Has reports whether k includes every kind in want.
func (k Kind) Has(want Kind) bool { return k&want == want }

// String lists the kinds in k, comma separated.
func (k Kind) String() string {
	names := []struct {
		k Kind
		n string
	}{{KindMutex, "mutex"}, {KindReentrant, "reentrant"}}
	s := ""
	for _, e := range names {
		if k&e.k != 0 {
			if s != "" {
				s += ","
			}
			s += e.n
		}
	}
	if s == "" {
		return "none"
	}
	return s
}

// ErrNotHeld is returned by Worker.Unlock when the worker does not hold the lock (it was never
// taken, or its lease ran out and someone else has it now).
var ErrNotHeld = errors.New("drivers: lock not held by this worker")

// ErrUnsupported is returned, wrapped with the reason, by Driver.Open when the driver cannot run
// on the deployment in Config (e.g. a single-node lock library on N independent masters). It
// marks a combination to skip, not a failure.
var ErrUnsupported = errors.New("drivers: unsupported combination")

// Config is what a driver needs to open clients against a running Redis deployment.
type Config struct {
	// Topology is the deployment kind: "single", "sentinel", "cluster" or "masters" (the
	// compose.Kind* constants). Empty means "single".
	Topology string
	// Addrs are the host:port addresses clients dial: the server for single, the sentinels for
	// sentinel, any (seed) nodes for cluster, every independent master for masters.
	Addrs []string
	// MasterName is the sentinel master name; used only when Topology is "sentinel".
	MasterName string
	// Concurrency is the number of workers that will share the Locker; drivers size pools by it.
	Concurrency int
	// Lease is the lock lease. Zero means the driver's default (for lockcore: watchdog renewal).
	Lease time.Duration
}

// Driver opens Lockers of one lock library. Implementations are safe for concurrent use.
type Driver interface {
	// Name is the name users pass to --driver.
	Name() string
	// Kinds lists the lock kinds this driver supports.
	Kinds() Kind
	// Open connects to the deployment in cfg, giving up after ConnectTimeout if it does not
	// answer. It returns an error wrapping ErrUnsupported when the driver cannot run on
	// cfg.Topology. The caller closes the Locker.
	Open(ctx context.Context, cfg Config) (Locker, error)
}

// Locker is one client of a lock library, shared by all workers of a run. It is safe for
// concurrent use.
type Locker interface {
	// NewWorker returns a lock owner for one worker goroutine.
	NewWorker() Worker
	// Settings describes the client configuration, recorded in results.
	Settings() map[string]string
	// Close releases the client's connections.
	Close() error
}

// Worker is one lock owner. It is not safe for concurrent use: one goroutine drives it.
type Worker interface {
	// Lock blocks until the worker holds the exclusive lock name or ctx ends.
	Lock(ctx context.Context, name string) error
	// Unlock releases one hold of name. It returns an error wrapping ErrNotHeld if the worker
	// does not hold it.
	Unlock(ctx context.Context, name string) error
}
