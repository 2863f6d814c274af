package drivers

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Naive defaults: the classic lock of the seed documents.
const (
	// NaiveDefaultLease is the PX of SET NX when the run sets no lease. There is no renewal.
	NaiveDefaultLease = 30 * time.Second
	// NaiveRetryDelay is the sleep between SET NX attempts while the lock is taken.
	NaiveRetryDelay = time.Millisecond
)

// NaiveDriver is the classic single-key lock: SET key token NX PX, retried after a short sleep
// while taken, released by a Lua compare-and-delete so only the holder's token deletes the key.
// It uses go-redis v9 with a connection pool sized to the workers. Its option retries (see
// goRedisTuning) sets go-redis's MaxRetries.
type NaiveDriver struct {
	tune goRedisTuning
}

var (
	_ Driver       = NaiveDriver{}
	_ Configurable = NaiveDriver{}
)

func init() { Register(NaiveDriver{}) }

// Name implements Driver.
func (d NaiveDriver) Name() string { return d.tune.name("naive") }

// Options implements Configurable.
func (NaiveDriver) Options() []Option { return goRedisOptions }

// Configure implements Configurable.
func (NaiveDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	t, err := configureGoRedis("naive", spec, opts)
	return NaiveDriver{tune: t}, err
}

// Kinds implements Driver.
func (NaiveDriver) Kinds() Kind { return KindMutex }

// Open implements Driver. It runs on single, sentinel (the master) and cluster (the lock key's
// node); on N independent masters it returns an error wrapping ErrUnsupported.
func (d NaiveDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	t, err := singleNodeTopology(cfg, "naive")
	if err != nil {
		return nil, err
	}
	rdb, err := openGoRedis(ctx, cfg, t, d.tune.retries)
	if err != nil {
		return nil, fmt.Errorf("naive: %w", err)
	}
	lease := leaseOr(d.tune.lease, cfg.Lease, NaiveDefaultLease)
	return &naiveLocker{rdb: rdb, topology: t, lease: lease, pool: poolSize(cfg), prefix: uuid.NewString() + ":", tune: d.tune}, nil
}

// compareAndDelete deletes the key only if it still holds the caller's token.
var compareAndDelete = redis.NewScript(`
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0`)

type naiveLocker struct {
	rdb      redis.UniversalClient
	topology string
	lease    time.Duration
	pool     int
	prefix   string
	workers  atomic.Uint64
	tune     goRedisTuning
}

func (l *naiveLocker) NewWorker() Worker {
	id := l.workers.Add(1)
	return &naiveWorker{l: l, prefix: l.prefix + strconv.FormatUint(id, 10) + ":", held: map[string]string{}}
}

func (l *naiveLocker) Settings() map[string]string {
	s := map[string]string{
		"client":        "go-redis " + redis.Version(),
		"topology":      l.topology,
		"pool_size":     strconv.Itoa(l.pool),
		"lease":         l.lease.String() + " (no renewal)",
		"retry_delay":   NaiveRetryDelay.String(),
		"release":       "Lua compare-and-delete (EVALSHA)",
		"reply_timeout": goRedisReplyTimeout(),
	}
	l.tune.describe(s)
	return s
}

func (l *naiveLocker) Close() error { return l.rdb.Close() }

// naiveWorker makes a fresh token per acquisition so a late release after the lease ran out can
// never delete the next holder's key.
type naiveWorker struct {
	l      *naiveLocker
	prefix string
	seq    uint64
	held   map[string]string
}

func (w *naiveWorker) Lock(ctx context.Context, name string) error {
	w.seq++
	token := w.prefix + strconv.FormatUint(w.seq, 10)
	attempt := detach(ctx)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ok, err := w.l.rdb.SetNX(attempt, name, token, w.l.lease).Result()
		if err != nil {
			return err
		}
		if ok {
			w.held[name] = token
			return nil
		}
		t := time.NewTimer(NaiveRetryDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (w *naiveWorker) Unlock(ctx context.Context, name string) error {
	token, ok := w.held[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotHeld, name)
	}
	delete(w.held, name)
	n, err := compareAndDelete.Run(detach(ctx), w.l.rdb, []string{name}, token).Int64()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: %q expired or was taken over", ErrNotHeld, name)
	}
	return nil
}
