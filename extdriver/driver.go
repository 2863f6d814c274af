package extdriver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
)

func init() {
	drivers.RegisterScheme(SchemePrefix, func(spec string) (drivers.Driver, error) {
		s, err := ParseSpec(spec)
		if err != nil {
			return nil, err
		}
		return &Driver{spec: spec, s: s}, nil
	})
}

// Driver is a drivers.Driver whose lock library runs in an adapter process: one process per
// Open. Safe for concurrent use.
type Driver struct {
	spec string
	s    Spec
	// Options, if set, adjusts the process options before each start (tests shorten timeouts).
	Options func(*Options)
}

var _ drivers.Driver = (*Driver)(nil)

// New returns the driver for "exec:NAME=COMMAND". Errors wrap drivers.ErrBadOption.
func New(spec string) (*Driver, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return &Driver{spec: spec, s: s}, nil
}

// Name is the spec, so that results and workers name the same driver.
func (d *Driver) Name() string { return d.spec }

// Kinds are those the protocol drives (Kinds); Open refuses, with drivers.ErrUnsupported, a
// workload whose Needs the adapter's hello does not claim.
func (d *Driver) Kinds() drivers.Kind { return Kinds }

// Open starts the adapter for cfg's deployment and waits for its hello.
func (d *Driver) Open(ctx context.Context, cfg drivers.Config) (drivers.Locker, error) {
	opt := Options{Name: d.s.Name, Argv: d.s.Argv, Env: Env(cfg)}
	if cfg.Conn != nil {
		opt.Redact = cfg.Conn.Redact
	}
	if d.Options != nil {
		d.Options(&opt)
	}
	a, err := Start(ctx, opt)
	if err != nil {
		return nil, err
	}
	needs := cfg.Needs
	if needs == 0 {
		needs = drivers.KindMutex
	}
	if !a.Kinds().Has(needs) {
		a.Close()
		return nil, fmt.Errorf("%w: adapter %s offers %s, the workload needs %s", drivers.ErrUnsupported, d.s.Name, a.Kinds(), needs)
	}
	// The lock Worker.Lock takes: a read-write lock's write lock, or a fenced lock without its
	// token, when the workload uses those (lockcore's rule: the kinds are not mixed on a name).
	lockOp := OpAcquire
	switch {
	case needs.Has(drivers.KindRW):
		lockOp = OpAcquireWrite
	case needs.Has(drivers.KindFenced):
		lockOp = OpAcquireFenced
	}
	return &Locker{a: a, spec: d.s, conn: cfg.Conn.Describe(), lockOp: lockOp}, nil
}

// Locker is the running adapter shared by a run's workers. Safe for concurrent use.
type Locker struct {
	a       *Adapter
	spec    Spec
	conn    map[string]string
	lockOp  string
	workers atomic.Int64
}

var _ drivers.CPULocker = (*Locker)(nil)

// ExternalCPU is the adapter's CPU time, which lockbench adds to the client CPU it records.
func (l *Locker) ExternalCPU() (time.Duration, bool) { return l.a.CPU() }

// Adapter is the running adapter.
func (l *Locker) Adapter() *Adapter { return l.a }

// NewWorker returns an owner of its own: "w1", "w2", …
func (l *Locker) NewWorker() drivers.Worker {
	w := &Worker{a: l.a, owner: "w" + strconv.FormatInt(l.workers.Add(1), 10), lockOp: l.lockOp}
	if l.a.Kinds().Has(drivers.KindFenced) {
		// Only then a FencedWorker: the contention workload checks tokens of any driver whose
		// workers are one.
		return &FencedWorker{w}
	}
	return w
}

// FencedWorker is the Worker of an adapter that offers fenced locks: a drivers.FencedWorker.
// Not safe for concurrent use.
type FencedWorker struct{ *Worker }

var _ drivers.FencedWorker = (*FencedWorker)(nil)

// LockFenced takes the fenced lock name and returns its token (kind fenced).
func (w *FencedWorker) LockFenced(ctx context.Context, name string) (int64, error) {
	ok, token, err := w.a.AcquireFenced(ctx, w.owner, name, -1)
	return token, granted(ok, err, name)
}

// Settings record what the adapter said about itself and how it was run.
func (l *Locker) Settings() map[string]string {
	h := l.a.Hello()
	s := map[string]string{
		"library":    h.Library + " " + h.Version,
		"language":   h.Language,
		"kinds":      l.a.Kinds().String(),
		"adapter":    l.spec.Name,
		"command":    strings.Join(l.spec.Argv, " "),
		"protocol":   "lockbench external-driver protocol " + strconv.Itoa(Protocol) + ": lines over the adapter's stdin/stdout",
		"transport":  "stdin/stdout pipes",
		"client_cpu": "lockbench's and the adapter process's",
	}
	if len(h.Keys) > 0 {
		s["keys"] = strings.Join(h.Keys, " ") // declared: cleaned with lockbench's own
	}
	for k, v := range l.conn {
		s[k] = v
	}
	return s
}

// Close ends the adapter: an unclean exit is an error.
func (l *Locker) Close() error { return l.a.Close() }

// Worker is one owner. It implements drivers.RWWorker and drivers.MultiWorker (Open has made
// sure that the adapter offers the kinds the workload needs), and is a FencedWorker when the
// adapter offers fenced locks. Not safe for concurrent use, like every drivers.Worker.
type Worker struct {
	a      *Adapter
	owner  string
	lockOp string // OpAcquire, OpAcquireWrite or OpAcquireFenced
}

var (
	_ drivers.RWWorker    = (*Worker)(nil)
	_ drivers.MultiWorker = (*Worker)(nil)
)

// granted turns an acquire with no wait limit into a Lock's error.
func granted(ok bool, err error, name string) error {
	if err == nil && !ok {
		// The adapter gave up on a wait it was not given: a library's own limit.
		return fmt.Errorf("%w: acquire %s: the adapter answered timeout to a wait with no limit", ErrLibrary, name)
	}
	return err
}

// Lock waits until granted or ctx ends: an acquire with no wait limit, cancelled when ctx ends.
func (w *Worker) Lock(ctx context.Context, name string) error {
	ok, _, err := w.a.acquire(ctx, w.lockOp, w.owner, name, nil, -1)
	return granted(ok, err, name)
}

// Unlock releases one hold; notowner is drivers.ErrNotHeld.
func (w *Worker) Unlock(_ context.Context, name string) error {
	return w.a.release(releaseOp(w.lockOp), w.owner, name, nil)
}

// RLock takes a read hold of the read-write lock name (kind rw).
func (w *Worker) RLock(ctx context.Context, name string) error {
	ok, err := w.a.AcquireRead(ctx, w.owner, name, -1)
	return granted(ok, err, name)
}

// RUnlock releases one read hold.
func (w *Worker) RUnlock(_ context.Context, name string) error {
	return w.a.ReleaseRead(w.owner, name)
}

// LockMulti takes every lock in names, all or nothing (kind multi).
func (w *Worker) LockMulti(ctx context.Context, names []string) error {
	ok, err := w.a.AcquireMulti(ctx, w.owner, names, -1)
	return granted(ok, err, strings.Join(names, ","))
}

// UnlockMulti releases the locks LockMulti took.
func (w *Worker) UnlockMulti(_ context.Context, names []string) error {
	return w.a.ReleaseMulti(w.owner, names)
}
