package drivers

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/lockcore"
)

// Settings of the lockcore driver on N independent masters (RedLock).
const (
	// LockcoreRedLockDefaultLease is the RedLock lease when the run sets none: redsync's default,
	// so that the two RedLocks are compared on equal terms. It is not renewed: lockcore's
	// watchdog would renew each master's hold on its own, which does not keep the quorum
	// guarantee once masters fail (see lockcore.RedLock), so lockbench uses the algorithm's
	// fixed lease.
	LockcoreRedLockDefaultLease = RedsyncDefaultLease
	// LockcoreRedLockRetryDelay is the mean pause, jittered by ±50%, between two attempts of a
	// worker waiting for a taken RedLock: redsync's adapter retries as often, so the two wait
	// alike (lockcore's own default, lockcore.DefaultRedLockRetryDelay, is 100 ms).
	LockcoreRedLockRetryDelay = RedsyncRetryDelay
	// lockcoreRedLockKinds are the kinds of the lockcore driver on masters: RedLock is a
	// reentrant mutex, and a MultiLock takes RedLocks as well as it takes Mutexes.
	lockcoreRedLockKinds = KindMutex | KindReentrant | KindMulti
)

// openLockcoreRedLock opens one lockcore Client per independent master in cfg, for RedLock.
// Of the tuning it uses sync (the one lockcore option that applies to a RedLock's Clients),
// node_timeout (0: lockcore's default) and watchdog, the lease of locks taken without --lease,
// which on masters is the RedLock's, not renewed (0: LockcoreRedLockDefaultLease).
func openLockcoreRedLock(_ context.Context, cfg Config, tune lockcoreTuning) (Locker, error) {
	if err := checkNeeds(cfg, "lockcore on masters (RedLock)", lockcoreRedLockKinds); err != nil {
		return nil, err
	}
	sync := tune.sync
	l := &lockcoreRedLocker{lease: cfg.Lease, sync: sync, nodeTimeout: tune.nodeTimeout}
	if l.lease <= 0 {
		l.lease = cmp.Or(tune.watchdogLease, LockcoreRedLockDefaultLease)
	}
	if l.nodeTimeout <= 0 {
		l.nodeTimeout = lockcore.DefaultRedLockNodeTimeout
	}
	for _, addr := range cfg.Addrs {
		one := cfg
		one.Addrs = []string{addr}
		b, err := openLockcore(one, topoSingle, "lockcore", lockcoreTuning{sync: sync})
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("lockcore: master %s: %w", addr, err)
		}
		l.clients = append(l.clients, b.c)
	}
	return l, nil
}

// lockcoreRedLocker is the lockcore driver on N independent masters: every lock is a
// lockcore.RedLock over one Client per master.
type lockcoreRedLocker struct {
	clients []*lockcore.Client
	lease   time.Duration
	sync    lockcore.SyncMode // the sync option given
	// nodeTimeout is every RedLock's lockcore.RedLockOptions.NodeTimeout.
	nodeTimeout time.Duration
}

func (l *lockcoreRedLocker) NewWorker() Worker {
	return &lockcoreRedLockWorker{l: l, owner: l.clients[0].NewOwner()}
}

func (l *lockcoreRedLocker) Settings() map[string]string {
	n := len(l.clients)
	s := map[string]string{
		"client":        "rueidis " + moduleVersion("github.com/redis/rueidis") + " auto-pipelining, one client per master",
		"topology":      topoMasters,
		"lock":          "RedLock over " + strconv.Itoa(n) + " masters (a Mutex on each)",
		"quorum":        strconv.Itoa(n/2 + 1),
		"lease":         l.lease.String() + ", not renewed",
		"node_timeout":  l.nodeTimeout.String(),
		"retry_delay":   LockcoreRedLockRetryDelay.String() + " ±50%",
		"multi_lock":    "MultiLock over RedLocks, step wait " + lockcore.DefaultMultiLockStepWait.String(),
		"scripts":       "EVALSHA",
		"reply_timeout": rueidisReplyTimeout(),
	}
	describeSync(s, l.clients[0], l.sync)
	return s
}

func (l *lockcoreRedLocker) Close() error {
	for _, c := range l.clients {
		c.Close()
	}
	return nil
}

// lockcoreRedLockWorker writes one Owner on every master. It keeps its last RedLock and
// MultiLock so that a lock-then-unlock builds them once.
type lockcoreRedLockWorker struct {
	l     *lockcoreRedLocker
	owner lockcore.Owner
	last  *lockcore.RedLock
	multi lastMulti
	sleep *time.Timer
}

var _ MultiWorker = (*lockcoreRedLockWorker)(nil)

func (w *lockcoreRedLockWorker) redLock(name string) *lockcore.RedLock {
	if w.last == nil || w.last.Name() != name {
		w.last = w.newRedLock(name)
	}
	return w.last
}

func (w *lockcoreRedLockWorker) newRedLock(name string) *lockcore.RedLock {
	return lockcore.NewRedLock(w.l.clients, name, lockcore.RedLockOptions{RetryDelay: LockcoreRedLockRetryDelay, NodeTimeout: w.l.nodeTimeout})
}

// Lock makes one RedLock attempt after another until one is granted or ctx ends. An attempt
// that too few masters answered ends it with the error (wrapping lockcore.ErrNoQuorum), which
// the caller counts: a minority of dead masters is waited through, more is a failure.
func (w *lockcoreRedLockWorker) Lock(ctx context.Context, name string) error {
	r := w.redLock(name)
	d := LockcoreRedLockRetryDelay
	for {
		ok, err := r.TryLock(ctx, w.owner, 0, w.l.lease)
		switch {
		case ok:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return err
		}
		if err := sleepCtx(ctx, &w.sleep, d/2+rand.N(d)); err != nil {
			return err
		}
	}
}

func (w *lockcoreRedLockWorker) Unlock(ctx context.Context, name string) error {
	return notHeld(w.redLock(name).Unlock(ctx, w.owner))
}

// LockMulti implements MultiWorker: a MultiLock over RedLocks.
func (w *lockcoreRedLockWorker) LockMulti(ctx context.Context, names []string) error {
	return lockMulti(ctx, w.multi.get(names, w.redLocker), w.owner, w.l.lease)
}

// UnlockMulti implements MultiWorker.
func (w *lockcoreRedLockWorker) UnlockMulti(ctx context.Context, names []string) error {
	return notHeld(w.multi.get(names, w.redLocker).Unlock(ctx, w.owner))
}

func (w *lockcoreRedLockWorker) redLocker(name string) lockcore.Locker { return w.newRedLock(name) }
