package drivers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
)

// Redislock settings lockbench uses.
const (
	// RedislockDefaultLease is the lock TTL when the run sets no lease. redislock has no default
	// of its own; this is naive's, the same single-key lock. There is no renewal.
	RedislockDefaultLease = 30 * time.Second
	// RedislockDefaultRetry is the linear backoff between attempts while the lock is taken, when
	// RedislockDriver.Retry is zero: as often as naive retries.
	RedislockDefaultRetry = time.Millisecond
	// redislockHorizon is the deadline Lock gives Obtain: far enough never to be reached.
	redislockHorizon = 24 * time.Hour
)

// RedislockDriver runs github.com/bsm/redislock over go-redis v9: a Lua SET NX PX to obtain, a
// Lua compare-and-delete to release, both by EVALSHA. Obtain is called with a linear backoff
// retry strategy and again after it gives up, until the Lock context ends. The registered driver
// is the zero value; a RedislockDriver value is safe for concurrent use.
type RedislockDriver struct {
	// Retry is the linear backoff between attempts while the lock is taken. Zero means
	// RedislockDefaultRetry.
	Retry time.Duration
	tune  goRedisTuning
}

var (
	_ Driver       = RedislockDriver{}
	_ Configurable = RedislockDriver{}
)

func init() { Register(RedislockDriver{}) }

// Name implements Driver.
func (d RedislockDriver) Name() string { return d.tune.name("redislock") }

// Options implements Configurable: retries (see goRedisTuning) sets go-redis's MaxRetries.
func (RedislockDriver) Options() []Option { return goRedisOptions }

// Configure implements Configurable.
func (d RedislockDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	t, err := configureGoRedis("redislock", spec, opts)
	d.tune = t
	return d, err
}

// Kinds implements Driver.
func (RedislockDriver) Kinds() Kind { return KindMutex }

// Open implements Driver. It runs on single, sentinel and cluster; on N independent masters it
// returns an error wrapping ErrUnsupported.
func (d RedislockDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	t, err := singleNodeTopology(cfg, "redislock")
	if err != nil {
		return nil, err
	}
	rdb, err := openGoRedis(ctx, cfg, t, d.tune.retries)
	if err != nil {
		return nil, fmt.Errorf("redislock: %w", err)
	}
	lease := leaseOr(d.tune.lease, cfg.Lease, RedislockDefaultLease)
	retry := d.Retry
	if retry <= 0 {
		retry = RedislockDefaultRetry
	}
	return &redislockLocker{rdb: rdb, client: redislock.New(rdb), topology: t, lease: lease, retry: retry, pool: poolSize(cfg), tune: d.tune}, nil
}

type redislockLocker struct {
	rdb      redis.UniversalClient
	client   *redislock.Client
	topology string
	lease    time.Duration
	retry    time.Duration
	pool     int
	tune     goRedisTuning
}

func (l *redislockLocker) NewWorker() Worker {
	w := &redislockWorker{l: l, held: map[string]*redislock.Lock{}}
	w.strategy.backoff = l.retry
	w.opt.RetryStrategy = &w.strategy
	return w
}

func (l *redislockLocker) Settings() map[string]string {
	s := map[string]string{
		"library":       "github.com/bsm/redislock " + moduleVersion("github.com/bsm/redislock"),
		"client":        "go-redis " + redis.Version(),
		"topology":      l.topology,
		"pool_size":     strconv.Itoa(l.pool),
		"lease":         l.lease.String() + " (no renewal)",
		"retry":         "LinearBackoff(" + l.retry.String() + ") until the context ends",
		"release":       "Lua compare-and-delete (EVALSHA)",
		"reply_timeout": goRedisReplyTimeout(),
	}
	l.tune.describe(s)
	return s
}

func (l *redislockLocker) Close() error { return l.rdb.Close() }

// untilDone is redislock's linear backoff that gives up once the caller's context has ended. It
// lets Obtain run with a detached context (so an attempt, once sent, always learns its outcome)
// while still returning soon after the caller gives up: within one backoff.
type untilDone struct {
	ctx     context.Context
	backoff time.Duration
}

func (s *untilDone) NextBackoff() time.Duration {
	if s.ctx.Err() != nil {
		return 0
	}
	return s.backoff
}

type redislockWorker struct {
	l        *redislockLocker
	held     map[string]*redislock.Lock
	strategy untilDone
	opt      redislock.Options
}

func (w *redislockWorker) Lock(ctx context.Context, name string) error {
	w.strategy.ctx = ctx
	defer func() { w.strategy.ctx = nil }()
	// Obtain gives up after one lease when its context has no deadline; a far one leaves the
	// decision to stop to the strategy, i.e. to ctx. The commands keep go-redis' read timeout.
	attempt, cancel := context.WithDeadline(detach(ctx), time.Now().Add(redislockHorizon))
	defer cancel()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		lk, err := w.l.client.Obtain(attempt, name, w.l.lease, &w.opt)
		switch {
		case err == nil:
			w.held[name] = lk
			return nil
		case errors.Is(err, redislock.ErrNotObtained):
			// The strategy gave up because ctx ended; the loop returns its error.
		default:
			return fmt.Errorf("redislock: lock %q: %w", name, err)
		}
	}
}

func (w *redislockWorker) Unlock(ctx context.Context, name string) error {
	lk, ok := w.held[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotHeld, name)
	}
	delete(w.held, name)
	err := lk.Release(detach(ctx))
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return fmt.Errorf("%w: %q expired or was taken over", ErrNotHeld, name)
	}
	if err != nil {
		return fmt.Errorf("redislock: unlock %q: %w", name, err)
	}
	return nil
}
