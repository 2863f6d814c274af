package drivers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

// Redsync settings lockbench uses.
const (
	// RedsyncDefaultLease is the lock expiry when the run sets no lease: redsync's own default.
	// There is no renewal.
	RedsyncDefaultLease = 8 * time.Second
	// RedsyncRetryDelay is the sleep between attempts while the lock is taken. redsync's default
	// (32 tries, 50–250 ms apart) gives up under contention; lockbench waits like the other
	// drivers, until the context ends, retrying as often as naive does.
	RedsyncRetryDelay = time.Millisecond
	// redsyncIdleMutexes bounds the released Mutex handles a worker keeps for reuse.
	redsyncIdleMutexes = 256
)

// RedsyncDriver runs github.com/go-redsync/redsync/v4 over go-redis v9: SET NX PX on every pool,
// granted on a quorum of N/2+1, released by a compare-and-delete script. On "masters" there is one
// pool per independent master, which is the RedLock algorithm; on single, sentinel and cluster one
// pool. Each Lock call makes one redsync attempt per try (WithTries(1)) and retries every
// RedsyncRetryDelay until its context ends, so that Lock blocks as the interface says.
// Its one option, lease=, gives it a lock expiry of its own.
type RedsyncDriver struct {
	spec  string
	lease time.Duration // lease= option; 0: the run's --lease, else RedsyncDefaultLease
}

var (
	_ Driver       = RedsyncDriver{}
	_ Configurable = RedsyncDriver{}
)

func init() { Register(RedsyncDriver{}) }

// Name implements Driver.
func (d RedsyncDriver) Name() string {
	if d.spec != "" {
		return d.spec
	}
	return "redsync"
}

// Options implements Configurable.
func (RedsyncDriver) Options() []Option { return []Option{leaseOption} }

// Configure implements Configurable.
func (RedsyncDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	d := RedsyncDriver{spec: spec}
	if v, ok := opts["lease"]; ok {
		l, err := parseLease("redsync", v)
		if err != nil {
			return nil, err
		}
		d.lease = l
	}
	return d, nil
}

// Kinds implements Driver.
func (RedsyncDriver) Kinds() Kind { return KindMutex }

// Open implements Driver. It runs on every topology.
func (d RedsyncDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	t, err := topology(cfg)
	if err != nil {
		return nil, err
	}
	var clients []redis.UniversalClient
	if t == topoMasters {
		clients, err = openGoRedisEach(ctx, cfg)
	} else {
		var rdb redis.UniversalClient
		rdb, err = openGoRedis(ctx, cfg, t, 0)
		clients = []redis.UniversalClient{rdb}
	}
	if err != nil {
		return nil, fmt.Errorf("redsync: %w", err)
	}
	pools := make([]redsyncredis.Pool, len(clients))
	for i, c := range clients {
		pools[i] = goredis.NewPool(c)
	}
	lease := leaseOr(d.lease, cfg.Lease, RedsyncDefaultLease)
	return &redsyncLocker{
		rs:       redsync.New(pools...),
		clients:  clients,
		topology: t,
		lease:    lease,
		quorum:   len(pools)/2 + 1,
		pool:     poolSize(cfg),
	}, nil
}

type redsyncLocker struct {
	rs       *redsync.Redsync
	clients  []redis.UniversalClient
	topology string
	lease    time.Duration
	quorum   int
	pool     int
}

func (l *redsyncLocker) NewWorker() Worker {
	return &redsyncWorker{l: l, held: map[string]*redsync.Mutex{}, idle: map[string]*redsync.Mutex{}}
}

func (l *redsyncLocker) Settings() map[string]string {
	return map[string]string{
		"library":       "github.com/go-redsync/redsync/v4 " + moduleVersion("github.com/go-redsync/redsync/v4"),
		"client":        "go-redis " + redis.Version() + " (redsync goredis/v9 pool)",
		"topology":      l.topology,
		"pools":         strconv.Itoa(len(l.clients)),
		"quorum":        strconv.Itoa(l.quorum),
		"pool_size":     strconv.Itoa(l.pool),
		"lease":         l.lease.String() + " (no renewal)",
		"retry":         "WithTries(1) per attempt, retried every " + RedsyncRetryDelay.String() + " until the context ends",
		"drift":         "redsync defaults: drift factor 0.01, per-attempt timeout 5% of the lease",
		"release":       "Lua compare-and-delete on every pool (EVALSHA)",
		"reply_timeout": goRedisReplyTimeout(),
	}
}

func (l *redsyncLocker) Close() error {
	var errs []error
	for _, c := range l.clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// redsyncWorker keeps one redsync Mutex per lock it holds (the Mutex carries the random value
// that proves ownership) and reuses released ones, a bounded number, instead of making a new
// Mutex per acquisition.
type redsyncWorker struct {
	l     *redsyncLocker
	held  map[string]*redsync.Mutex
	idle  map[string]*redsync.Mutex
	timer *time.Timer
}

func (w *redsyncWorker) mutex(name string) *redsync.Mutex {
	if m, ok := w.idle[name]; ok {
		delete(w.idle, name)
		return m
	}
	return w.l.rs.NewMutex(name, redsync.WithExpiry(w.l.lease), redsync.WithTries(1))
}

// keep puts a Mutex the worker does not hold back for reuse, if there is room.
func (w *redsyncWorker) keep(name string, m *redsync.Mutex) {
	if len(w.idle) < redsyncIdleMutexes {
		w.idle[name] = m
	}
}

func (w *redsyncWorker) Lock(ctx context.Context, name string) error {
	m := w.mutex(name)
	// redsync releases on every pool what a failed attempt may have set, with the attempt's
	// context: detached, so that a canceled caller cannot leave a half-taken lock behind.
	attempt := detach(ctx)
	for {
		if err := ctx.Err(); err != nil {
			w.keep(name, m)
			return err
		}
		err := m.LockContext(attempt)
		if err == nil {
			w.held[name] = m
			return nil
		}
		if w.fatal(err) {
			w.keep(name, m)
			return fmt.Errorf("redsync: lock %q: %w", name, err)
		}
		if err := sleepCtx(ctx, &w.timer, RedsyncRetryDelay); err != nil {
			w.keep(name, m)
			return err
		}
	}
}

// fatal reports whether a failed attempt is an error rather than a lost race: so many pools
// failed to answer that no quorum is possible even without contention. A minority of dead
// masters is what RedLock tolerates, so it is retried.
func (w *redsyncWorker) fatal(err error) bool {
	return countRedisErrors(err) > len(w.l.clients)-w.l.quorum
}

// countRedisErrors counts the redsync.RedisError values (a pool that failed to answer) in the
// tree of joined errors redsync returns.
func countRedisErrors(err error) int {
	switch e := err.(type) {
	case nil:
		return 0
	case *redsync.RedisError, redsync.RedisError:
		return 1
	case interface{ Unwrap() []error }:
		n := 0
		for _, sub := range e.Unwrap() {
			n += countRedisErrors(sub)
		}
		return n
	case interface{ Unwrap() error }:
		return countRedisErrors(e.Unwrap())
	}
	return 0
}

func (w *redsyncWorker) Unlock(ctx context.Context, name string) error {
	m, ok := w.held[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotHeld, name)
	}
	delete(w.held, name)
	w.keep(name, m)
	released, err := m.UnlockContext(detach(ctx))
	if released {
		return nil
	}
	if w.fatal(err) {
		return fmt.Errorf("redsync: unlock %q: %w", name, err)
	}
	// The value was gone (expired) or someone else's on a quorum of pools.
	return fmt.Errorf("%w: %q expired or was taken over: %v", ErrNotHeld, name, err)
}
