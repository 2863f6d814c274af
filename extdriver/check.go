package extdriver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/redis/rueidis"
)

// Rules driver-check holds an adapter to, in the order it checks them.
const (
	RuleHello       = "hello"             // starts, and its first line is a valid hello
	RuleExclusion   = "exclusion"         // no two owners hold one lock at once, under contention
	RuleNonOwner    = "non-owner-release" // a release by an owner that does not hold the lock is notowner, and the holder keeps it
	RuleWaitTimeout = "wait-timeout"      // an acquire of a held lock answers timeout once its wait has passed, not before
	RuleReentrant   = "reentrant"         // (when claimed) the holder takes the lock again, and it stays held until the last release
	RuleRW          = "rw"                // (when claimed) readers share, a writer excludes readers and writers, non-owner read releases are notowner
	RuleMulti       = "multi"             // (when claimed) all or nothing: a multi-lock overlapping a held one takes none of its names
	RuleFenced      = "fenced"            // (when claimed) every grant's token is greater than the earlier grants' of the lock
	RuleFair        = "fair"              // (when claimed) waiters queued one after another are granted in that order
	RuleLeaseExpiry = "lease-expiry"      // a grant not released ends with its lease: a waiter gets the lock, the late release is notowner
	RuleShutdown    = "shutdown"          // exits 0, soon, once its stdin closes
	RuleKeys        = "keys"              // (with CheckOptions.Redis) makes no key but its lock names, lockbench's shapes of them and its hello's keys
)

// Check defaults.
const (
	DefaultCheckOwners   = 8
	DefaultCheckDuration = 2 * time.Second
	// CheckWait is the wait of the wait-timeout rule; CheckLease the lease of the lease-expiry rule.
	CheckWait  = 300 * time.Millisecond
	CheckLease = 500 * time.Millisecond
	// checkSlack is how much earlier than its wait a timeout may come (millisecond rounding),
	// and checkLate how much later a timeout or an expiry may come.
	checkSlack = 5 * time.Millisecond
	checkLate  = 5 * time.Second
)

// Marker is told of every holder between the grant lockbench received and the release it
// sent: referee.Referee is one, the safety checker on a Redis of its own.
type Marker interface {
	Enter(key, worker int, shared bool)
	Exit(key, worker int)
}

// CheckOptions say what to check and against which Redis. Zero values mean the defaults.
type CheckOptions struct {
	// Spec is the adapter, "exec:NAME=COMMAND".
	Spec string
	// Config is the Redis the adapter uses (its Lease is replaced by each rule's own).
	Config drivers.Config
	// Marker, if set, is told of every holder of the exclusion rule, as a run's referee is.
	Marker Marker
	// Owners contend on two locks for Duration in the exclusion rule.
	Owners   int
	Duration time.Duration
	// Out gets one line per rule: "ok   RULE" or "FAIL RULE: …".
	Out io.Writer
	// Process adjusts the process options (tests shorten timeouts).
	Process func(*Options)
	// Redis, if set, is a client of the Redis the adapter uses (Config's): after the other
	// rules, the keys rule SCANs it for keys the adapter made that are none of the check's lock
	// names, lockbench's shapes of them (package keyspace) or its hello's keys. nil: the rule
	// is not checked (no Redis, e.g. the null adapter).
	Redis rueidis.Client
}

// Failure is a broken rule: which, the operation that broke it, and how.
type Failure struct {
	Rule   string
	Op     string
	Detail string
}

func (f Failure) Error() string { return fmt.Sprintf("rule %s: %s: %s", f.Rule, f.Op, f.Detail) }

// ErrBadCheck: the check could not run (bad spec, no Redis): no verdict on the adapter.
var ErrBadCheck = errors.New("extdriver: driver-check could not run")

// Check runs the conformance rules on the adapter of opt.Spec and returns the broken ones,
// each named; an error wrapping ErrBadCheck when it could not check.
func Check(ctx context.Context, opt CheckOptions) ([]Failure, error) {
	d, err := New(opt.Spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCheck, err)
	}
	if opt.Owners <= 0 {
		opt.Owners = DefaultCheckOwners
	}
	if opt.Duration <= 0 {
		opt.Duration = DefaultCheckDuration
	}
	if opt.Out == nil {
		opt.Out = io.Discard
	}
	d.Options = opt.Process
	c := &checker{opt: opt, d: d, prefix: "lockbench:driver-check:" + strconv.FormatUint(rand.Uint64(), 36) + ":"}
	return c.run(ctx), nil
}

type checker struct {
	opt    CheckOptions
	d      *Driver
	prefix string
	fails  []Failure

	mu     sync.Mutex
	groups map[string]bool // the lock-name groups used (lock), whose keys the keys rule allows
}

// lock is lock i of group (a rule's locks): prefix + group + ":" + i, a lock name of the shape
// lockbench's runs use (keyspace: P<n>, with P the check's prefix and the group), so that the
// keys rule knows every key lockbench's shapes derive from it.
func (c *checker) lock(group string, i int) string {
	c.mu.Lock()
	if c.groups == nil {
		c.groups = map[string]bool{}
	}
	c.groups[group] = true
	c.mu.Unlock()
	return c.prefix + group + ":" + strconv.Itoa(i)
}

func (c *checker) report(rule string, f *Failure) {
	if f == nil {
		fmt.Fprintf(c.opt.Out, "ok   %s\n", rule)
		return
	}
	f.Rule = rule
	c.fails = append(c.fails, *f)
	fmt.Fprintf(c.opt.Out, "FAIL %s\n", f.Error())
}

func (c *checker) start(ctx context.Context, lease time.Duration) (*Adapter, *Failure) {
	cfg := c.opt.Config
	cfg.Lease = lease
	cfg.Concurrency = c.opt.Owners
	opt := Options{Name: c.d.s.Name, Argv: c.d.s.Argv, Env: Env(cfg)}
	if cfg.Conn != nil {
		opt.Redact = cfg.Conn.Redact
	}
	if c.opt.Process != nil {
		c.opt.Process(&opt)
	}
	a, err := Start(ctx, opt)
	if err != nil {
		return nil, &Failure{Op: "start", Detail: err.Error()}
	}
	return a, nil
}

func (c *checker) run(ctx context.Context) []Failure {
	before, skip := c.keysBefore(ctx)
	a, f := c.start(ctx, 0)
	c.report(RuleHello, f)
	if f != nil {
		return c.fails
	}
	declared := a.Hello().Declared()
	c.report(RuleExclusion, c.exclusion(ctx, a))
	c.report(RuleNonOwner, c.nonOwner(ctx, a))
	c.report(RuleWaitTimeout, c.waitTimeout(ctx, a))
	if a.Kinds().Has(drivers.KindReentrant) {
		c.report(RuleReentrant, c.reentrant(ctx, a))
	}
	if a.Kinds().Has(drivers.KindRW) {
		c.report(RuleRW, c.rw(ctx, a))
	}
	if a.Kinds().Has(drivers.KindMulti) {
		c.report(RuleMulti, c.multi(ctx, a))
	}
	if a.Kinds().Has(drivers.KindFenced) {
		c.report(RuleFenced, c.fenced(ctx, a))
	}
	if a.Kinds().Has(drivers.KindFair) {
		c.report(RuleFair, c.fair(ctx, a))
	}
	var shut *Failure
	if err := a.Close(); err != nil {
		shut = &Failure{Op: "close stdin", Detail: err.Error()}
	}
	if b, f := c.start(ctx, CheckLease); f != nil {
		c.report(RuleLeaseExpiry, f)
	} else {
		c.report(RuleLeaseExpiry, c.leaseExpiry(ctx, b))
		if err := b.Close(); err != nil && shut == nil {
			shut = &Failure{Op: "close stdin", Detail: err.Error()}
		}
	}
	c.report(RuleShutdown, shut)
	if c.opt.Redis != nil {
		if skip != "" {
			fmt.Fprintf(c.opt.Out, "skip %s: %s\n", RuleKeys, skip)
		} else {
			c.report(RuleKeys, c.keys(ctx, before, declared))
		}
	}
	return c.fails
}

func op(verb, owner, name string, wait time.Duration) string {
	s := verb + " owner=" + owner + " lock=" + name
	if wait >= -1 {
		s += " wait=" + waitText(wait)
	}
	return s
}

// noWait marks an op without a wait (a release) for op.
const noWait = -2

func waitText(d time.Duration) string {
	if d < 0 {
		return "none"
	}
	return d.String()
}

// acquire is one acquire that must end as want ("ok" or "timeout").
func (c *checker) acquire(ctx context.Context, a *Adapter, owner, name string, wait time.Duration, want string) *Failure {
	_, f := c.acquireOp(ctx, a, OpAcquire, owner, name, nil, wait, want)
	return f
}

// acquireOp is one acquire of kind verb (acquire, racquire, wacquire, macquire, facquire) that
// must end as want, and the token of a fenced grant.
func (c *checker) acquireOp(ctx context.Context, a *Adapter, verb, owner, name string, names []string, wait time.Duration, want string) (int64, *Failure) {
	ok, token, err := a.acquire(ctx, verb, owner, name, names, wait)
	got := StatusTimeout
	switch {
	case err != nil:
		return 0, &Failure{Op: op(verb, owner, lockNames(name, names), wait), Detail: err.Error()}
	case ok:
		got = StatusOK
	}
	if got != want {
		return 0, &Failure{Op: op(verb, owner, lockNames(name, names), wait), Detail: "answered " + got + ", want " + want}
	}
	return token, nil
}

// release is one release that must end as want ("ok" or "notowner").
func (c *checker) release(a *Adapter, owner, name, want string) *Failure {
	return c.releaseOp(a, OpRelease, owner, name, nil, want)
}

// releaseOp is one release of kind verb (release, rrelease, wrelease, mrelease) that must end
// as want.
func (c *checker) releaseOp(a *Adapter, verb, owner, name string, names []string, want string) *Failure {
	err := a.release(verb, owner, name, names)
	got := StatusOK
	switch {
	case errors.Is(err, drivers.ErrNotHeld):
		got = StatusNotOwner
	case err != nil:
		return &Failure{Op: op(verb, owner, lockNames(name, names), noWait), Detail: err.Error()}
	}
	if got != want {
		return &Failure{Op: op(verb, owner, lockNames(name, names), noWait), Detail: "answered " + got + ", want " + want}
	}
	return nil
}

// steps runs the steps in order until one fails.
func steps(list ...func() *Failure) *Failure {
	for _, step := range list {
		if f := step(); f != nil {
			return f
		}
	}
	return nil
}

// rw: two readers at once; a writer refused while they read and granted after; a reader
// refused while the writer writes; a read release by an owner with no read hold refused.
func (c *checker) rw(ctx context.Context, a *Adapter) *Failure {
	name := c.lock("rw", 0)
	acq := func(verb, owner string, want string) func() *Failure {
		return func() *Failure { _, f := c.acquireOp(ctx, a, verb, owner, name, nil, 0, want); return f }
	}
	rel := func(verb, owner, want string) func() *Failure {
		return func() *Failure { return c.releaseOp(a, verb, owner, name, nil, want) }
	}
	return steps(
		acq(OpAcquireRead, "a", StatusOK),
		acq(OpAcquireRead, "b", StatusOK), // readers share
		acq(OpAcquireWrite, "c", StatusTimeout),
		rel(OpReleaseRead, "c", StatusNotOwner),
		rel(OpReleaseRead, "a", StatusOK),
		acq(OpAcquireWrite, "c", StatusTimeout), // b still reads
		rel(OpReleaseRead, "b", StatusOK),
		acq(OpAcquireWrite, "c", StatusOK),
		acq(OpAcquireRead, "a", StatusTimeout), // c writes
		acq(OpAcquireWrite, "b", StatusTimeout),
		rel(OpReleaseWrite, "a", StatusNotOwner),
		rel(OpReleaseWrite, "c", StatusOK),
		acq(OpAcquireRead, "a", StatusOK),
		rel(OpReleaseRead, "a", StatusOK),
	)
}

// multi: a holds x and y; b's multi-lock of z and y is refused and takes neither (z stays
// free); once a releases, b's is granted; a release by a non-owner is refused.
func (c *checker) multi(ctx context.Context, a *Adapter) *Failure {
	x, y, z := c.lock("multi", 0), c.lock("multi", 1), c.lock("multi", 2)
	macq := func(owner string, names []string, want string) func() *Failure {
		return func() *Failure { _, f := c.acquireOp(ctx, a, OpAcquireMulti, owner, "", names, 0, want); return f }
	}
	mrel := func(owner string, names []string, want string) func() *Failure {
		return func() *Failure { return c.releaseOp(a, OpReleaseMulti, owner, "", names, want) }
	}
	return steps(
		macq("a", []string{x, y}, StatusOK),
		macq("b", []string{z, y}, StatusTimeout),
		func() *Failure { return c.acquire(ctx, a, "c", z, 0, StatusOK) }, // all or nothing: b kept no z
		func() *Failure { return c.release(a, "c", z, StatusOK) },
		func() *Failure { return c.acquire(ctx, a, "c", x, 0, StatusTimeout) }, // a holds x
		mrel("b", []string{x, y}, StatusNotOwner),
		mrel("a", []string{x, y}, StatusOK),
		macq("b", []string{y, z}, StatusOK),
		mrel("b", []string{y, z}, StatusOK),
	)
}

// fenced: grants of one lock, to owners in turn, carry increasing tokens.
func (c *checker) fenced(ctx context.Context, a *Adapter) *Failure {
	name := c.lock("fenced", 0)
	last := int64(-1 << 63)
	for i := range 20 {
		owner := "f" + strconv.Itoa(i%2)
		token, f := c.acquireOp(ctx, a, OpAcquireFenced, owner, name, nil, -1, StatusOK)
		if f != nil {
			return f
		}
		if token <= last {
			return &Failure{Op: op(OpAcquireFenced, owner, name, -1), Detail: fmt.Sprintf("token %d after an earlier grant's %d: tokens must increase", token, last)}
		}
		last = token
		if f := c.release(a, owner, name, StatusOK); f != nil {
			return f
		}
	}
	return nil
}

// exclusion: Owners owners on two locks for Duration, each holder marked between the grant and
// the release as lockbench marks them.
func (c *checker) exclusion(ctx context.Context, a *Adapter) *Failure {
	const keys = 2
	var inside [keys]atomic.Int32
	var mu sync.Mutex
	var first *Failure
	var grants atomic.Int64
	fail := func(f *Failure) {
		mu.Lock()
		if first == nil {
			first = f
		}
		mu.Unlock()
	}
	end := time.Now().Add(c.opt.Duration)
	var wg sync.WaitGroup
	for o := range c.opt.Owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := "x" + strconv.Itoa(o)
			for i := 0; time.Now().Before(end) && ctx.Err() == nil; i++ {
				k := (o + i) % keys
				name := c.lock("exclusion", k)
				if f := c.acquire(ctx, a, owner, name, -1, StatusOK); f != nil {
					fail(f)
					return
				}
				grants.Add(1)
				if c.opt.Marker != nil {
					c.opt.Marker.Enter(k, o, false)
				}
				if n := inside[k].Add(1); n > 1 {
					fail(&Failure{Op: op(OpAcquire, owner, name, -1), Detail: fmt.Sprintf("granted while %d other owner(s) held %s", n-1, name)})
				}
				time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond) // a hold others can overlap
				inside[k].Add(-1)
				if c.opt.Marker != nil {
					c.opt.Marker.Exit(k, o)
				}
				if f := c.release(a, owner, name, StatusOK); f != nil {
					fail(f)
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && grants.Load() == 0 {
		first = &Failure{Op: "acquire", Detail: "no grant in " + c.opt.Duration.String()}
	}
	return first
}

func (c *checker) nonOwner(ctx context.Context, a *Adapter) *Failure {
	name := c.lock("non-owner", 0)
	for _, step := range []func() *Failure{
		func() *Failure { return c.acquire(ctx, a, "a", name, -1, StatusOK) },
		func() *Failure { return c.release(a, "b", name, StatusNotOwner) },
		func() *Failure { return c.acquire(ctx, a, "c", name, 0, StatusTimeout) }, // a still holds it
		func() *Failure { return c.release(a, "a", name, StatusOK) },
	} {
		if f := step(); f != nil {
			return f
		}
	}
	return nil
}

func (c *checker) waitTimeout(ctx context.Context, a *Adapter) *Failure {
	name := c.lock("wait-timeout", 0)
	if f := c.acquire(ctx, a, "a", name, -1, StatusOK); f != nil {
		return f
	}
	t0 := time.Now()
	f := c.acquire(ctx, a, "b", name, CheckWait, StatusTimeout)
	switch took := time.Since(t0); {
	case f != nil:
	case took < CheckWait-checkSlack:
		f = &Failure{Op: op(OpAcquire, "b", name, CheckWait), Detail: fmt.Sprintf("timeout after %v, before its wait", took.Round(time.Millisecond))}
	case took > CheckWait+checkLate:
		f = &Failure{Op: op(OpAcquire, "b", name, CheckWait), Detail: fmt.Sprintf("timeout after %v, long after its wait", took.Round(time.Millisecond))}
	}
	if rf := c.release(a, "a", name, StatusOK); f == nil {
		f = rf
	}
	return f
}

func (c *checker) reentrant(ctx context.Context, a *Adapter) *Failure {
	name := c.lock("reentrant", 0)
	for _, step := range []func() *Failure{
		func() *Failure { return c.acquire(ctx, a, "a", name, -1, StatusOK) },
		func() *Failure { return c.acquire(ctx, a, "a", name, 0, StatusOK) },
		func() *Failure { return c.release(a, "a", name, StatusOK) },
		func() *Failure { return c.acquire(ctx, a, "b", name, 0, StatusTimeout) }, // one hold left
		func() *Failure { return c.release(a, "a", name, StatusOK) },
		func() *Failure { return c.acquire(ctx, a, "b", name, 0, StatusOK) },
		func() *Failure { return c.release(a, "b", name, StatusOK) },
	} {
		if f := step(); f != nil {
			return f
		}
	}
	return nil
}

// leaseExpiry: with a lease of CheckLease, a grant never released ends: a waiter gets the lock,
// and the first holder's late release is refused.
func (c *checker) leaseExpiry(ctx context.Context, a *Adapter) *Failure {
	name := c.lock("lease-expiry", 0)
	if f := c.acquire(ctx, a, "a", name, -1, StatusOK); f != nil {
		return f
	}
	if f := c.acquire(ctx, a, "b", name, CheckLease+checkLate, StatusOK); f != nil {
		f.Detail += fmt.Sprintf(" (the lease was %v: a's grant should have ended)", CheckLease)
		return f
	}
	if f := c.release(a, "a", name, StatusNotOwner); f != nil {
		f.Detail += " (a's lease ran out and b holds the lock)"
		return f
	}
	return c.release(a, "b", name, StatusOK)
}
