// Package drivers adapts lock libraries to one small interface so that workloads can drive any of
// them side by side. Each adapter lives in its own file and registers itself in init.
package drivers

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/lockbench/lockbench/conn"
)

// Kind is a bit set of lock kinds a driver supports.
type Kind uint32

// Lock kinds. A workload names the kinds it needs; a driver lists the kinds it has.
const (
	// KindMutex is an exclusive lock taken and released once per hold.
	KindMutex Kind = 1 << iota
	// KindReentrant is an exclusive lock the same owner may take again while holding it.
	KindReentrant
	// KindFair is an exclusive lock that Worker.Lock grants to waiters in arrival order (FIFO).
	// It adds no methods: fairness is a property of Lock.
	KindFair
	// KindRW is a read-write lock: the workers implement RWWorker.
	KindRW
	// KindMulti is an all-or-nothing lock over several names: the workers implement MultiWorker.
	KindMulti
	// KindFenced is an exclusive lock whose grants carry increasing fencing tokens: the workers
	// implement FencedWorker, and Lock is the same lock without the token.
	KindFenced
)

// kindNames are the names String gives the kinds, in bit order.
var kindNames = []struct {
	k Kind
	n string
}{
	{KindMutex, "mutex"}, {KindReentrant, "reentrant"}, {KindFair, "fair"},
	{KindRW, "rw"}, {KindMulti, "multi"}, {KindFenced, "fenced"},
}

// Has reports whether k includes every kind in want.
func (k Kind) Has(want Kind) bool { return k&want == want }

// String lists the kinds in k, comma separated.
func (k Kind) String() string {
	s := ""
	for _, e := range kindNames {
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
	// Lease is the lock lease. Zero means the driver's default (for lockcore: watchdog renewal;
	// for lockcore on masters, LockcoreRedLockDefaultLease).
	Lease time.Duration
	// Needs is the lock kinds the caller will use (a workload's Needs). The workers of the
	// Locker Open returns implement the interface of every kind in Needs; a driver may pick its
	// lock by it (lockcore's Lock is a Mutex, or an RWMutex's write lock when Needs includes
	// KindRW: the two must not be mixed on one name). Open returns an error wrapping
	// ErrUnsupported when it cannot provide them on the topology (lockcore on masters has no
	// read-write RedLock). Zero means KindMutex.
	Needs Kind
	// Dialer, when set, makes every connection the driver's clients open: to the addresses in
	// Addrs and to those they discover (cluster nodes, the master a sentinel names, sentinels).
	// Each call is bounded by ConnectTimeout. Nil dials directly. lockbench sets it to a
	// netem.Net's Dial to put network conditions between the clients and Redis.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
	// Conn is how to connect: credentials, database, TLS, Unix sockets (see package conn).
	// Addrs are its Addrs. Nil is plaintext TCP with no credentials.
	Conn *conn.Settings
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

// Counters are a driver's own counts of its lock work, which explain a figure: attempts that
// found the lock taken (a barging releaser makes woken waiters fail), and grants passed between
// workers inside the process with no Redis round trip. They count from Open.
type Counters struct {
	// Attempts is lock attempts sent to Redis.
	Attempts int64
	// FailedAttempts is the attempts that found the lock taken.
	FailedAttempts int64
	// LocalHandoffs is grants passed from one worker to the next inside the process.
	LocalHandoffs int64
}

// Sub returns c minus before.
func (c Counters) Sub(before Counters) Counters {
	return Counters{c.Attempts - before.Attempts, c.FailedAttempts - before.FailedAttempts, c.LocalHandoffs - before.LocalHandoffs}
}

// CountingLocker is a Locker that reports Counters; lockbench records their delta over the
// measured phase. Implementations are safe for concurrent use.
type CountingLocker interface {
	Locker
	// Counters returns the counts so far.
	Counters() Counters
}

// Worker is one lock owner. It is not safe for concurrent use: one goroutine drives it.
//
// Lock kinds beyond KindMutex and KindReentrant add methods through the optional interfaces
// RWWorker, MultiWorker and FencedWorker: a driver whose Kinds include KindRW, KindMulti or
// KindFenced, opened with that kind in Config.Needs, returns workers that implement the matching
// interface, and callers find it with a type assertion.
type Worker interface {
	// Lock blocks until the worker holds the exclusive lock name or ctx ends.
	Lock(ctx context.Context, name string) error
	// Unlock releases one hold of name. It returns an error wrapping ErrNotHeld if the worker
	// does not hold it.
	Unlock(ctx context.Context, name string) error
}

// RWWorker is a Worker of a read-write lock (KindRW): Lock and Unlock take and release the write
// lock, which excludes readers and other writers; RLock and RUnlock take and release a read hold,
// which readers share. Not safe for concurrent use, like Worker.
type RWWorker interface {
	Worker
	// RLock blocks until the worker holds a read hold of name or ctx ends.
	RLock(ctx context.Context, name string) error
	// RUnlock releases one read hold of name. It returns an error wrapping ErrNotHeld if the
	// worker has none.
	RUnlock(ctx context.Context, name string) error
}

// MultiWorker is a Worker that takes several locks as one (KindMulti): all or nothing, without
// deadlock between workers taking overlapping sets, whatever slots the names hash to. Not safe
// for concurrent use, like Worker.
type MultiWorker interface {
	Worker
	// LockMulti blocks until the worker holds every lock in names or ctx ends; when it returns
	// an error the worker holds none of them. The names must be distinct. The worker does not
	// keep names: the caller may reuse the slice.
	LockMulti(ctx context.Context, names []string) error
	// UnlockMulti releases every lock in names, taken together by LockMulti. It tries them all;
	// the error wraps ErrNotHeld if the worker did not hold one of them.
	UnlockMulti(ctx context.Context, names []string) error
}

// FencedWorker is a Worker of a fenced lock (KindFenced): every grant returns a fencing token
// greater than that of every earlier grant of the same lock, so a resource that remembers the
// highest token it has seen can turn away a holder whose lease ran out. Not safe for concurrent
// use, like Worker.
type FencedWorker interface {
	Worker
	// LockFenced blocks until the worker holds the lock name or ctx ends, and returns the grant's
	// token. Release it with Unlock.
	LockFenced(ctx context.Context, name string) (int64, error)
}
