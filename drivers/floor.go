package drivers

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/rueidis"
)

// FloorDefaultLease is the PX of the floor's SET NX when the run sets no lease (as naive's).
const FloorDefaultLease = NaiveDefaultLease

// FloorDriver is a reference measurement, not a lock: the cheapest thing Redis can do per
// acquisition, `SET name v NX PX lease` to take and a plain `DEL name` to give back, two
// commands and no script. Issue 40 sets lockcore's Redis CPU per acquisition against it, so it
// runs beside any drivers, in the same run, on the same server and placement, at the same
// concurrency. It goes through rueidis, whose automatic pipelining puts the concurrent workers'
// commands into shared writes, as lockcore's batches do; a name that is taken is tried again
// after NaiveRetryDelay.
//
// The DEL does not check whose key it deletes, so a hold that outlives the lease frees the next
// holder's lock: the floor is safe only while every hold is shorter than its lease (30 s by
// default). It is neither in Names nor a negative control: users run it by name ("--driver
// floor") and References lists it. The registered driver is the zero value; it is safe for
// concurrent use.
type FloorDriver struct{}

var _ Driver = FloorDriver{}

func init() { RegisterReference(FloorDriver{}) }

// Name implements Driver.
func (FloorDriver) Name() string { return "floor" }

// Kinds implements Driver.
func (FloorDriver) Kinds() Kind { return KindMutex }

// Open implements Driver. It runs on single, sentinel (the master) and cluster (the name's
// node); on N independent masters it returns an error wrapping ErrUnsupported.
func (FloorDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	t, err := singleNodeTopology(cfg, "floor")
	if err != nil {
		return nil, err
	}
	ro, err := rueidisOption(cfg, t)
	if err != nil {
		return nil, err
	}
	rdb, err := rueidis.NewClient(ro)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	if err := rdb.Do(pctx, rdb.B().Ping().Build()).Error(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("floor: %w", err)
	}
	lease := leaseOr(0, cfg.Lease, FloorDefaultLease)
	return &floorLocker{rdb: rdb, topology: t, lease: lease, prefix: uuid.NewString() + ":"}, nil
}

type floorLocker struct {
	rdb      rueidis.Client
	topology string
	lease    time.Duration
	prefix   string
	workers  atomic.Uint64
}

func (l *floorLocker) NewWorker() Worker {
	id := l.workers.Add(1)
	return &floorWorker{l: l, token: l.prefix + strconv.FormatUint(id, 10), held: map[string]bool{}}
}

func (l *floorLocker) Settings() map[string]string {
	return map[string]string{
		"client":        "rueidis " + moduleVersion("github.com/redis/rueidis") + " (automatic pipelining)",
		"topology":      l.topology,
		"lease":         l.lease.String() + " (no renewal)",
		"retry_delay":   NaiveRetryDelay.String(),
		"release":       "DEL without checking the token",
		"purpose":       "REFERENCE, not a lock: SET NX PX + DEL, the floor of Redis CPU per acquisition; safe only while holds are shorter than the lease",
		"reply_timeout": rueidisReplyTimeout(),
	}
}

func (l *floorLocker) Close() error {
	l.rdb.Close()
	return nil
}

// floorWorker keeps one token for its life: nothing reads it back, it only makes the SET the
// same size as a real lock's.
type floorWorker struct {
	l     *floorLocker
	token string
	held  map[string]bool
	sleep *time.Timer
}

func (w *floorWorker) Lock(ctx context.Context, name string) error {
	if w.held[name] {
		return fmt.Errorf("floor: %q is already held by this worker (the floor is not reentrant)", name)
	}
	px := w.l.lease.Milliseconds()
	attempt := detach(ctx)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := w.l.rdb.Do(attempt, w.l.rdb.B().Set().Key(name).Value(w.token).Nx().PxMilliseconds(px).Build()).Error()
		if err == nil {
			w.held[name] = true
			return nil
		}
		if !rueidis.IsRedisNil(err) {
			return err
		}
		if err := sleepCtx(ctx, &w.sleep, NaiveRetryDelay); err != nil {
			return err
		}
	}
}

func (w *floorWorker) Unlock(ctx context.Context, name string) error {
	if !w.held[name] {
		return fmt.Errorf("%w: %q", ErrNotHeld, name)
	}
	delete(w.held, name)
	return w.l.rdb.Do(detach(ctx), w.l.rdb.B().Del().Key(name).Build()).Error()
}
