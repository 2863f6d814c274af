package drivers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/lockhooks"
	"github.com/lockbench/lockbench/lockcore"
)

// LockcoreDriver runs lockbench's own engine: Redisson's RLock protocol over rueidis with
// EVALSHA, auto-pipelining, coalesced waiters and a batched watchdog. Workers lock a Mutex; when
// Config.Needs includes KindRW they are RWWorkers over an RWMutex instead (Lock is its write
// lock); they are MultiWorkers over a MultiLock of Mutexes, one call per lock, so the names may
// lie in any slots of a cluster. On N independent masters it runs RedLock over one Client per
// master (see lockcore_redlock.go). It is safe for concurrent use.
//
// Its options (see Configurable and lockcore_options.go) tune the local waiter queue and the
// hand-over bounds: "lockcore:handoff=0" is strict mode.
type LockcoreDriver struct {
	spec  string   // the name with options; empty for plain "lockcore"
	given []string // the option keys spec gives, sorted
	tune  lockcoreTuning
}

var _ Configurable = LockcoreDriver{}

func init() { Register(LockcoreDriver{}) }

// Name implements Driver.
func (d LockcoreDriver) Name() string {
	if d.spec != "" {
		return d.spec
	}
	return "lockcore"
}

// Kinds implements Driver. On masters only the mutex, reentrant and multi kinds are available;
// Open refuses a Config.Needs with others there.
func (LockcoreDriver) Kinds() Kind { return KindMutex | KindReentrant | KindRW | KindMulti }

// Open implements Driver. It runs on single, sentinel and cluster, and on masters as RedLock.
func (d LockcoreDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	t, err := topology(cfg)
	if err != nil {
		return nil, err
	}
	if err := d.CheckTopology(t); err != nil {
		return nil, err
	}
	if t == topoMasters {
		return openLockcoreRedLock(ctx, cfg, d.tune)
	}
	if err := checkNeeds(cfg, d.Name(), d.Kinds()); err != nil {
		return nil, err
	}
	b, err := openLockcore(cfg, t, d.Name(), d.tune)
	if err != nil {
		return nil, err
	}
	return &lockcoreLocker{lockcoreBase: b, needs: cfg.Needs}, nil
}

// redLockOptions are the lockcore options a RedLock on masters uses (watchdog as its lease,
// not renewed): its per-master Clients keep lockcore's defaults otherwise.
var redLockOptions = []string{"sync", "node_timeout", "watchdog"}

// CheckTopology implements TopologyChecker: node_timeout is for masters alone, and on masters
// only the RedLock's options apply; any other would label a run with a setting it never had.
func (d LockcoreDriver) CheckTopology(topology string) error {
	if topology != topoMasters {
		if slices.Contains(d.given, "node_timeout") {
			return fmt.Errorf("%w: lockcore option node_timeout is for --topology masters (RedLock); on %s nothing would use it", ErrBadOption, topology)
		}
		return nil
	}
	for _, k := range d.given {
		if !slices.Contains(redLockOptions, k) {
			return fmt.Errorf("%w: lockcore option %s has no use on --topology masters: the RedLock there takes only %s and %s", ErrBadOption, k,
				strings.Join(redLockOptions[:len(redLockOptions)-1], ", "), redLockOptions[len(redLockOptions)-1])
		}
	}
	return nil
}

// checkNeeds returns an error wrapping ErrUnsupported when cfg.Needs asks for kinds not in have.
func checkNeeds(cfg Config, driver string, have Kind) error {
	if !have.Has(cfg.Needs) {
		return fmt.Errorf("%w: %s has %v locks, not %v", ErrUnsupported, driver, have, cfg.Needs&^have)
	}
	return nil
}

// lockcoreBase is one lockcore Client on a single, sentinel or cluster deployment, shared by the
// lockcore drivers' Lockers.
type lockcoreBase struct {
	c        *lockcore.Client
	topology string
	lease    time.Duration
	tune     lockcoreTuning
}

// openLockcore connects a lockcore Client to the deployment of topology t in cfg.
func openLockcore(cfg Config, t, driver string, tune lockcoreTuning) (*lockcoreBase, error) {
	if cfg.Lease > 0 && cfg.Lease < time.Millisecond {
		// Every lockcore lock call would refuse it; say so once, before connecting.
		return nil, fmt.Errorf("%s: lease %v is below 1ms: %w", driver, cfg.Lease, lockcore.ErrShortLease)
	}
	ro, err := rueidisOption(cfg, t)
	if err != nil {
		return nil, err
	}
	opt := lockcore.Options{Redis: ro}
	tune.apply(&opt)
	c, err := lockcore.New(opt)
	if err != nil {
		return nil, fmt.Errorf("%s: connect to %s %v: %w", driver, t, cfg.Addrs, err)
	}
	return &lockcoreBase{c: c, topology: t, lease: cfg.Lease, tune: tune}, nil
}

// Counters implements CountingLocker from the Client's Stats: Mutex and FencedMutex attempts;
// hand-overs are the in-process ones (a grant passed on inside the release script is a grant
// through Redis).
func (b *lockcoreBase) Counters() Counters {
	s := lockhooks.ClientStats(b.c)
	return Counters{Attempts: s.Attempts, FailedAttempts: s.FailedAttempts, LocalHandoffs: s.Handoffs}
}

// settings describes the client; lock says which lockcore lock Lock and Unlock use.
func (b *lockcoreBase) settings(lock string) map[string]string {
	lease := lockcore.DefaultLeaseTime.String() + " renewed by the watchdog"
	if b.tune.watchdogLease > 0 {
		lease = b.tune.watchdogLease.String() + " renewed by the watchdog every " + (b.tune.watchdogLease / 3).String()
	}
	if b.lease > 0 {
		lease = b.lease.String()
	}
	s := map[string]string{
		"client":          "rueidis " + moduleVersion("github.com/redis/rueidis") + " auto-pipelining",
		"topology":        b.topology,
		"lock":            lock,
		"max_flush_delay": b.tune.flushDelayString(),
		"lease":           lease,
		"scripts":         "EVALSHA",
		"waiters":         "coalesced, one subscription per lock",
		"renewals":        "batched, one pipeline per watchdog tick",
		"reply_timeout":   rueidisReplyTimeout(),
	}
	describeSync(s, b.c, b.tune.sync)
	return s
}

func (b *lockcoreBase) Close() error {
	b.c.Close()
	return nil
}

// lockcoreLocker is the lockcore driver on one deployment. Its workers' Lock is a Mutex, or the
// write lock of an RWMutex when the run needs read-write locks: the two are different kinds of
// lock at one key, which must not be mixed on one name.
type lockcoreLocker struct {
	*lockcoreBase
	needs Kind
}

func (l *lockcoreLocker) NewWorker() Worker {
	w := lockcoreWorker{c: l.c, owner: l.c.NewOwner(), lease: l.lease}
	if l.needs&KindRW != 0 {
		return &lockcoreRWWorker{lockcoreWorker: w}
	}
	return &w
}

func (l *lockcoreLocker) Settings() map[string]string {
	lock := "Mutex (Redisson RLock)"
	if l.needs&KindRW != 0 {
		lock = "RWMutex (Redisson RReadWriteLock): Lock writes, RLock reads"
	}
	s := l.settings(lock)
	if l.needs&KindRW == 0 {
		l.tune.describe(s)
	}
	if l.needs&KindMulti != 0 {
		s["multi_lock"] = "MultiLock over Mutexes, step wait " + lockcore.DefaultMultiLockStepWait.String()
	}
	return s
}

// lockcoreWorker keeps the handles of its last locks so that the usual lock-then-unlock of one
// name (or set of names) builds them once.
type lockcoreWorker struct {
	c     *lockcore.Client
	owner lockcore.Owner
	lease time.Duration
	// last is a copy of the handle, not a pointer: a cycle on a new name then allocates nothing
	// for the handle.
	last  lockcore.Mutex
	multi lastMulti
}

var _ MultiWorker = (*lockcoreWorker)(nil)

func (w *lockcoreWorker) mutex(name string) *lockcore.Mutex {
	if w.last.Name() != name || w.last == (lockcore.Mutex{}) {
		w.last = *w.c.Mutex(name)
	}
	return &w.last
}

func (w *lockcoreWorker) Lock(ctx context.Context, name string) error {
	if w.lease > 0 {
		return w.mutex(name).LockLease(ctx, w.owner, w.lease)
	}
	return w.mutex(name).Lock(ctx, w.owner)
}

func (w *lockcoreWorker) Unlock(ctx context.Context, name string) error {
	return notHeld(w.mutex(name).Unlock(ctx, w.owner))
}

// LockMulti implements MultiWorker.
func (w *lockcoreWorker) LockMulti(ctx context.Context, names []string) error {
	return lockMulti(ctx, w.multi.get(names, w.mutexLocker), w.owner, w.lease)
}

// UnlockMulti implements MultiWorker.
func (w *lockcoreWorker) UnlockMulti(ctx context.Context, names []string) error {
	return notHeld(w.multi.get(names, w.mutexLocker).Unlock(ctx, w.owner))
}

func (w *lockcoreWorker) mutexLocker(name string) lockcore.Locker { return w.c.Mutex(name) }

// lockcoreRWWorker is a lockcoreWorker whose Lock and Unlock are an RWMutex's write lock.
type lockcoreRWWorker struct {
	lockcoreWorker
	rw *lockcore.RWMutex
}

var (
	_ RWWorker    = (*lockcoreRWWorker)(nil)
	_ MultiWorker = (*lockcoreRWWorker)(nil)
)

func (w *lockcoreRWWorker) rwMutex(name string) *lockcore.RWMutex {
	if w.rw == nil || w.rw.Name() != name {
		w.rw = w.c.RWMutex(name)
	}
	return w.rw
}

// Lock takes the write lock.
func (w *lockcoreRWWorker) Lock(ctx context.Context, name string) error {
	if w.lease > 0 {
		return w.rwMutex(name).LockLease(ctx, w.owner, w.lease)
	}
	return w.rwMutex(name).Lock(ctx, w.owner)
}

// Unlock releases the write lock.
func (w *lockcoreRWWorker) Unlock(ctx context.Context, name string) error {
	return notHeld(w.rwMutex(name).Unlock(ctx, w.owner))
}

// RLock implements RWWorker.
func (w *lockcoreRWWorker) RLock(ctx context.Context, name string) error {
	if w.lease > 0 {
		return w.rwMutex(name).RLockLease(ctx, w.owner, w.lease)
	}
	return w.rwMutex(name).RLock(ctx, w.owner)
}

// RUnlock implements RWWorker.
func (w *lockcoreRWWorker) RUnlock(ctx context.Context, name string) error {
	return notHeld(w.rwMutex(name).RUnlock(ctx, w.owner))
}

// lastMulti keeps a worker's last MultiLock, built again only when the names change.
type lastMulti struct {
	names []string
	m     *lockcore.MultiLock
}

// get returns the MultiLock over the locks lockerFor gives for names.
func (lm *lastMulti) get(names []string, lockerFor func(string) lockcore.Locker) *lockcore.MultiLock {
	if lm.m != nil && slices.Equal(lm.names, names) {
		return lm.m
	}
	locks := make([]lockcore.Locker, len(names))
	for i, n := range names {
		locks[i] = lockerFor(n)
	}
	lm.m = lockcore.NewMultiLock(locks, lockcore.MultiLockOptions{})
	lm.names = append(lm.names[:0], names...)
	return lm.m
}

// waitForever is a TryLock wait that ctx ends long before it runs out: about 146 years.
const waitForever = time.Duration(1 << 62)

// lockMulti takes m for owner until ctx ends: with the locks' default leases renewed by the
// watchdog when lease is 0, else each lock with lease and no renewal.
func lockMulti(ctx context.Context, m *lockcore.MultiLock, owner lockcore.Owner, lease time.Duration) error {
	if lease <= 0 {
		return m.Lock(ctx, owner)
	}
	ok, err := m.TryLock(ctx, owner, waitForever, lease)
	switch {
	case err != nil:
		return err
	case !ok && ctx.Err() != nil:
		return ctx.Err()
	case !ok:
		return fmt.Errorf("lockcore: multilock %s not granted", m.Name())
	}
	return nil
}

// notHeld maps lockcore's ErrNotOwner to ErrNotHeld, keeping the message.
func notHeld(err error) error {
	if errors.Is(err, lockcore.ErrNotOwner) {
		return fmt.Errorf("%w: %v", ErrNotHeld, err)
	}
	return err
}
