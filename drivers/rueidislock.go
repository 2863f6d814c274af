package drivers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/rueidis/rueidislock"
)

// RueidislockDefaultKeyMajority is the rueidislock KeyMajority lockbench uses when
// RueidislockDriver.KeyMajority is zero: one key per lock. rueidislock's own default, 2 of 3 keys,
// buys nothing on one deployment (the keys share its fate) and triples the commands.
const RueidislockDefaultKeyMajority = 1

// RueidislockDriver runs github.com/redis/rueidis/rueidislock: SET NX PXAT on KeyMajority*2-1
// keys, kept alive by extending them every half validity, released by a compare-and-delete;
// waiters in one process share a local gate per name and are woken by client-side-caching
// invalidations of the lock keys. The lease of a run sets the key validity (default
// rueidislock's 5 s), which is always renewed. The registered driver is the zero value; a
// RueidislockDriver value is safe for concurrent use.
type RueidislockDriver struct {
	// KeyMajority is how many of KeyMajority*2-1 keys must be acquired. Zero means
	// RueidislockDefaultKeyMajority.
	KeyMajority int32
	spec        string
	validity    time.Duration // validity= option; 0: the run's --lease
}

var (
	_ Driver       = RueidislockDriver{}
	_ Configurable = RueidislockDriver{}
)

func init() { Register(RueidislockDriver{}) }

// Name implements Driver.
func (d RueidislockDriver) Name() string {
	if d.spec != "" {
		return d.spec
	}
	return "rueidislock"
}

// Options implements Configurable.
func (RueidislockDriver) Options() []Option {
	return []Option{{"validity", "KeyValidity: the keys' lease, renewed every half of it, over --lease (default rueidislock's " + rueidislockDefaultValidity.String() + "; at least 3ms)"}}
}

// Configure implements Configurable.
func (d RueidislockDriver) Configure(spec string, opts map[string]string) (Driver, error) {
	d.spec = spec
	if v, ok := opts["validity"]; ok {
		l, err := time.ParseDuration(v)
		if err != nil || l < 3*time.Millisecond {
			return nil, fmt.Errorf("%w: rueidislock option validity=%s: want a duration of at least 3ms, e.g. 1s", ErrBadOption, v)
		}
		d.validity = l
	}
	return d, nil
}

// Kinds implements Driver.
func (RueidislockDriver) Kinds() Kind { return KindMutex }

// Open implements Driver. It runs on single, sentinel and cluster; on N independent masters it
// returns an error wrapping ErrUnsupported (rueidislock's majority is over keys of one
// deployment).
func (d RueidislockDriver) Open(ctx context.Context, cfg Config) (Locker, error) {
	t, err := singleNodeTopology(cfg, "rueidislock")
	if err != nil {
		return nil, err
	}
	ro, err := rueidisOption(cfg, t)
	if err != nil {
		return nil, err
	}
	validity := leaseOr(d.validity, cfg.Lease, 0)
	l := &rueidislockLocker{topology: t, majority: d.KeyMajority, validity: validity, holds: map[*rueidisHold]struct{}{}}
	if l.majority <= 0 {
		l.majority = RueidislockDefaultKeyMajority
	}
	l.rl, err = rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: ro,
		KeyMajority:  l.majority,
		KeyValidity:  validity,
		// NOLOOP tracking (Redis >= 7.0.5) would spare the client invalidations of its own
		// writes, but then a waiter in this process is never woken when an attempt that timed
		// out (TryNextAfter, 20 ms) had in fact set the key and rueidislock deletes it again on
		// the same connection: no invalidation, and no local signal for a failed attempt. Under
		// load that left every waiter of a free lock asleep; the library default has no such hole.
		NoLoopTracking: false,
	})
	if err != nil {
		return nil, fmt.Errorf("rueidislock: connect to %s %v: %w", t, cfg.Addrs, err)
	}
	if l.validity <= 0 {
		l.validity = rueidislockDefaultValidity
	}
	l.base, l.cancel = context.WithCancel(context.Background())
	return l, nil
}

// RueidislockRewait is how long Lock lets one rueidislock wait run before starting it again (see
// rueidislockWorker.Lock): long enough to cost little under contention, short enough that a lost
// wake-up is a blip in a latency histogram rather than a stuck worker.
const RueidislockRewait = 250 * time.Millisecond

// rueidislockDefaultValidity is rueidislock's KeyValidity default, for Settings.
const rueidislockDefaultValidity = 5 * time.Second

type rueidislockLocker struct {
	rl       rueidislock.Locker
	topology string
	majority int32
	validity time.Duration

	// base is the parent of every lock context, canceled by Close; holds are the locks held now,
	// so that Close can release them and wait for rueidislock's goroutines to finish.
	base   context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	holds  map[*rueidisHold]struct{}
	closed bool
}

// rueidisHold is one held lock: its context ends if the lock is lost; unlock releases it and
// waits for the release to finish.
type rueidisHold struct {
	ctx    context.Context
	unlock context.CancelFunc
	cancel context.CancelFunc // of the context Lock made for the lock
}

func (h *rueidisHold) release() {
	h.unlock()
	h.cancel()
}

func (l *rueidislockLocker) NewWorker() Worker {
	return &rueidislockWorker{l: l, held: map[string]*rueidisHold{}}
}

func (l *rueidislockLocker) Settings() map[string]string {
	return map[string]string{
		"library":       "github.com/redis/rueidis/rueidislock " + moduleVersion("github.com/redis/rueidis"),
		"topology":      l.topology,
		"key_majority":  fmt.Sprintf("%d of %d keys", l.majority, l.majority*2-1),
		"validity":      l.validity.String() + " renewed every " + (l.validity / 2).String(),
		"waiters":       "local gate per name, woken by releases in this process and by client-side caching invalidations (CLIENT TRACKING OPTOUT)",
		"scripts":       "EVALSHA (rueidis Lua)",
		"rewait":        RueidislockRewait.String() + " (a wait is restarted after this, bounding a lost wake-up in rueidislock's gate accounting)",
		"reply_timeout": rueidisReplyTimeout(),
	}
}

func (l *rueidislockLocker) Close() error {
	l.mu.Lock()
	l.closed = true
	holds := l.holds
	l.holds = nil
	l.mu.Unlock()
	// Release what is still held and wait for it: rueidislock's unlock waits for its key
	// goroutines, which would otherwise outlive Close.
	for h := range holds {
		h.release()
	}
	l.cancel()
	l.rl.Close()
	return nil
}

func (l *rueidislockLocker) track(h *rueidisHold) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.holds[h] = struct{}{}
	return true
}

func (l *rueidislockLocker) untrack(h *rueidisHold) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.holds[h]; !ok {
		return false // Close took it
	}
	delete(l.holds, h)
	return true
}

type rueidislockWorker struct {
	l    *rueidislockLocker
	held map[string]*rueidisHold
}

// Lock waits with rueidislock.WithContext. A lock lives as long as the context it was taken
// with, so it is taken with a context of the Locker, not ctx (which may end right after Lock,
// e.g. a per-acquisition timeout); ctx ending while Lock waits cancels the wait.
//
// A wait longer than RueidislockRewait is canceled and started again. rueidislock v1.0.79 can lose
// a waiter's wake-up: the goroutine that settles a failed attempt may run before the attempt is
// counted as failed, and then takes the waiter off the name's gate a second time; the gate is
// later dropped while the waiter still sleeps on it, and with client-side caching nothing else
// wakes it. Starting again joins the live gate, so such a loss costs at most RueidislockRewait.
func (w *rueidislockWorker) Lock(ctx context.Context, name string) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		lctx, lcancel := context.WithCancel(w.l.base)
		stop := context.AfterFunc(ctx, lcancel)
		guard := time.AfterFunc(RueidislockRewait, lcancel)
		hctx, unlock, err := w.l.rl.WithContext(lctx, name)
		rewait := !guard.Stop()
		if canceled := !stop(); canceled || rewait {
			// ctx ended or the guard fired while waiting: give back whatever was obtained, as
			// its context is canceled anyway.
			if err == nil {
				unlock()
			}
			lcancel()
			if canceled {
				return ctx.Err()
			}
			// WithContext retries every failure, the server's refusals and timeouts included,
			// and never returns one: a refused run made 0 acquisitions and 0 errors (issue 36).
			// One attempt that reports its answer tells a lock held by others from a failure.
			if held, err := w.try(ctx, name); held || err != nil {
				return err
			}
			continue
		}
		if err != nil {
			lcancel()
			return fmt.Errorf("rueidislock: lock %q: %w", name, err)
		}
		h := &rueidisHold{ctx: hctx, unlock: unlock, cancel: lcancel}
		if !w.l.track(h) {
			h.release()
			return fmt.Errorf("rueidislock: lock %q: %w", name, rueidislock.ErrLockerClosed)
		}
		w.held[name] = h
		return nil
	}
}

// try makes one attempt at name with rueidislock.TryWithContext, which, unlike WithContext,
// returns the server's answer: held reports that it took the lock; err is the failure of an
// attempt that was not merely beaten by another holder (a refusal, a timeout), or ctx's error.
func (w *rueidislockWorker) try(ctx context.Context, name string) (held bool, err error) {
	lctx, lcancel := context.WithCancel(w.l.base)
	stop := context.AfterFunc(ctx, lcancel)
	hctx, unlock, err := w.l.rl.TryWithContext(lctx, name)
	if !stop() {
		if err == nil {
			unlock()
		}
		lcancel()
		return false, ctx.Err()
	}
	switch {
	case errors.Is(err, rueidislock.ErrNotLocked):
		lcancel()
		return false, nil
	case err != nil:
		lcancel()
		return false, fmt.Errorf("rueidislock: lock %q: %w", name, err)
	}
	h := &rueidisHold{ctx: hctx, unlock: unlock, cancel: lcancel}
	if !w.l.track(h) {
		h.release()
		return false, fmt.Errorf("rueidislock: lock %q: %w", name, rueidislock.ErrLockerClosed)
	}
	w.held[name] = h
	return true, nil
}

func (w *rueidislockWorker) Unlock(ctx context.Context, name string) error {
	h, ok := w.held[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotHeld, name)
	}
	delete(w.held, name)
	if !w.l.untrack(h) {
		return fmt.Errorf("%w: %q was released when the Locker closed", ErrNotHeld, name)
	}
	// rueidislock cancels the lock's context when it loses a majority of its keys.
	lost := h.ctx.Err() != nil
	h.release()
	if lost {
		return fmt.Errorf("%w: %q was lost while held (its keys expired or were taken)", ErrNotHeld, name)
	}
	return nil
}
