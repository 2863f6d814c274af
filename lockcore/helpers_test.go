package lockcore

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/rueidis"
)

// testEnv is a Redis deployment for one test: how lockcore clients connect to it, a client to
// inspect keys through the same topology, and one direct client per master for server-wide
// questions (INFO, KEYS, PUBSUB), which a cluster answers per node.
type testEnv struct {
	addr    string               // the server, for single-server envs only
	opt     rueidis.ClientOption // how lockcore clients connect
	rdb     rueidis.Client       // key commands, routed by the topology
	masters []rueidis.Client     // one direct connection per master
	sharded bool                 // unlock messages travel by sharded pub/sub
	// mode is the Mutex queueing every client of the env uses unless a test sets its own.
	mode queueMode
}

// queueMode is one way a Client's Mutex goroutines meet: the semantics suite passes in each.
type queueMode struct {
	name string
	// set applies the mode to options that do not choose their own.
	set func(*Options)
}

// queueModes are the local waiter queue with hand-over (the default), the queue in strict mode
// (every release through Redis), no queue at all, all three with auto-batching, and the default
// without auto-batching.
var queueModes = []queueMode{
	{"handoff", func(*Options) {}},
	{"strict", func(o *Options) {
		if o.HandoffLimit == 0 {
			o.HandoffLimit = -1
		}
	}},
	{"noqueue", func(o *Options) { o.knobs.NoLocalQueue = true }},
	{"nobatch", func(o *Options) { o.knobs.NoBatch = true }},
}

func newEnv(t testing.TB) *testEnv {
	t.Helper()
	srv := redistest.NewServer(t)
	e := newEnvFor(t, rueidis.ClientOption{InitAddress: []string{srv.Addr()}}, []string{srv.Addr()}, false)
	e.addr = srv.Addr()
	return e
}

// newEnvFor builds an env on a running deployment: opt says how to reach it through its
// topology, masters are the master addresses.
func newEnvFor(t testing.TB, opt rueidis.ClientOption, masters []string, sharded bool) *testEnv {
	t.Helper()
	e := &testEnv{opt: opt, sharded: sharded}
	inspect := opt
	inspect.DisableCache = true
	rdb, err := rueidis.NewClient(inspect)
	if err != nil {
		t.Fatalf("inspection client: %v", err)
	}
	t.Cleanup(rdb.Close)
	e.rdb = rdb
	for _, addr := range masters {
		m, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true,
			Username: opt.Username, Password: opt.Password, TLSConfig: opt.TLSConfig})
		if err != nil {
			t.Fatalf("client for %s: %v", addr, err)
		}
		t.Cleanup(m.Close)
		e.masters = append(e.masters, m)
	}
	return e
}

// client returns a lockcore Client on the env's deployment, closed when the test ends.
func (e *testEnv) client(t testing.TB, opt Options) *Client {
	t.Helper()
	if e.mode.set != nil && opt.HandoffLimit == 0 && !opt.knobs.NoLocalQueue {
		e.mode.set(&opt)
	}
	if opt.SyncTimeout == 0 {
		// The semantics tests check what a call does, not how soon replicas acknowledge it: a
		// replica container starved for a second on a loaded CI machine failed an unlock with
		// ErrNotSynced at the default 1 s (2026-11-28, TestSemanticsOnDocker/cluster). Tests of
		// shortfalls set their own, short, timeout.
		opt.SyncTimeout = 5 * time.Second
	}
	opt.Redis.InitAddress = e.opt.InitAddress
	opt.Redis.Sentinel = e.opt.Sentinel
	opt.Redis.Username, opt.Redis.Password, opt.Redis.TLSConfig = e.opt.Username, e.opt.Password, e.opt.TLSConfig
	c, err := New(opt)
	if err != nil {
		t.Fatalf("lockcore.New: %v", err)
	}
	t.Cleanup(c.Close)
	if want := e.sharded; (c.PubSub() == PubSubSharded) != want {
		t.Fatalf("client pub/sub mode %v on a deployment where sharded is %v", c.PubSub(), want)
	}
	return c
}

// do runs a command on the key in args[1] (or a keyless command on the first master), routed
// the way a cluster routes it.
func (e *testEnv) do(t testing.TB, args ...string) rueidis.RedisResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if len(args) >= 2 {
		return e.rdb.Do(ctx, e.rdb.B().Arbitrary(args[0]).Keys(args[1]).Args(args[2:]...).Build())
	}
	return e.masters[0].Do(ctx, e.masters[0].B().Arbitrary(args...).Build())
}

// onMasters runs a keyless command on every master and returns the replies.
func (e *testEnv) onMasters(t testing.TB, args ...string) []rueidis.RedisResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []rueidis.RedisResult
	for _, m := range e.masters {
		out = append(out, m.Do(ctx, m.B().Arbitrary(args...).Build()))
	}
	return out
}

func (e *testEnv) int(t testing.TB, args ...string) int64 {
	t.Helper()
	n, err := e.do(t, args...).AsInt64()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return n
}

// calls returns the calls count of one command from INFO commandstats, summed over masters.
func (e *testEnv) calls(t testing.TB, cmd string) int64 {
	t.Helper()
	var total int64
	for _, res := range e.onMasters(t, "INFO", "commandstats") {
		info, err := res.ToString()
		if err != nil {
			t.Fatalf("INFO: %v", err)
		}
		prefix := "cmdstat_" + cmd + ":calls="
		for _, line := range strings.Split(info, "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
				n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
				total += n
			}
		}
	}
	return total
}

// assertNoKeys fails if any master holds a key: every test leaves Redis clean.
func (e *testEnv) assertNoKeys(t testing.TB) {
	t.Helper()
	for i, res := range e.onMasters(t, "KEYS", "*") {
		keys, err := res.AsStrSlice()
		if err != nil {
			t.Fatalf("KEYS: %v", err)
		}
		if len(keys) != 0 {
			t.Errorf("keys left behind on master %d: %v", i, keys)
		}
	}
}

// numsub returns how many subscribers channel has, over all masters, in the env's pub/sub mode.
func (e *testEnv) numsub(t testing.TB, channel string) int64 {
	t.Helper()
	cmd := "NUMSUB"
	if e.sharded {
		cmd = "SHARDNUMSUB"
	}
	var total int64
	for _, r := range e.onMasters(t, "PUBSUB", cmd, channel) {
		res, err := r.ToArray()
		if err != nil || len(res) != 2 {
			t.Fatalf("PUBSUB %s: %v", cmd, err)
		}
		n, _ := res[1].AsInt64()
		total += n
	}
	return total
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// localQueueLen returns how many goroutines of c wait in the local queue of the Mutex name.
func (c *Client) localQueueLen(name string) int {
	s := c.holds.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.co[name]; e != nil {
		return len(e.queue)
	}
	return 0
}

// cohorts returns how many Mutex names c keeps local queue state for.
func (c *Client) cohorts() int {
	n := 0
	for i := range c.holds.shards {
		s := &c.holds.shards[i]
		s.mu.Lock()
		n += len(s.co)
		s.mu.Unlock()
	}
	return n
}

// isClosed reports whether ch is closed, without blocking.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// tableLease is what a Client's hold table believes of one Mutex-family hold's lease.
type tableLease struct {
	Name, Field string
	Left        time.Duration // how long the confirmed lease still runs
}

// tableLeases returns the confirmed leases of c's holds on Redisson lock hashes (read-write
// holds, kept under keys of their own, are left out, and so are holds whose lease the table
// knows it cannot vouch for: hold.unsure), for comparison with Redis's PTTL.
func tableLeases(c *Client) []tableLease {
	now := c.now()
	var out []tableLease
	for i := range c.holds.shards {
		s := &c.holds.shards[i]
		s.mu.Lock()
		for name, h := range s.m {
			if h.renewer == nil && !h.unsure {
				out = append(out, tableLease{Name: name, Field: h.field, Left: time.Duration(h.expires - now)})
			}
		}
		s.mu.Unlock()
	}
	return out
}

// hotLock keeps the Mutex name of c busy with workers goroutines that lock and unlock it back to
// back, until the returned stop is called (it waits for them). grants counts their grants.
func hotLock(t *testing.T, ctx context.Context, c *Client, name string, workers int) (stop func(), grants *atomic.Int64) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	grants = new(atomic.Int64)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := c.NewOwner()
			m := c.Mutex(name)
			for i := 0; i < 10_000_000; i++ {
				select {
				case <-done:
					return
				default:
				}
				if err := m.Lock(ctx, o); err != nil {
					t.Error(err)
					return
				}
				grants.Add(1)
				if err := m.Unlock(ctx, o); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	waitFor(t, func() bool { return grants.Load() > 1000 })
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }, grants
}

// assertRenewalsStop fails the test if c's watchdog goes on renewing after the caller released
// every hold of c. A renewal sent just before the release may be answered after it (its reply
// counts, and renewing a released lock finds no field and does nothing); each gives up after
// RenewInterval/2, so counting starts one interval later, and the next interval × 5 must bring
// none. interval is c's RenewInterval.
func assertRenewalsStop(t *testing.T, c *Client, interval time.Duration) {
	t.Helper()
	time.Sleep(interval)
	after := c.renewalCount()
	time.Sleep(5 * interval)
	if got := c.renewalCount(); got != after {
		t.Fatalf("renewals went on after the release: %d → %d in five renewal intervals", after, got)
	}
}

// batchArgs turns a batch call's operations written one after another, each as "[lock]
// opcode lease field [wfield wlease own]" (the lock with names, for nodeBatchScript), into the
// ARGV of batchScript or nodeBatchScript, through the encoder the client uses.
func batchArgs(names bool, pub string, ops ...string) []string {
	var b batchArgv
	b.reset(pub, "", names)
	for i, first := 0, true; i < len(ops); first = false {
		name := ""
		if names {
			name, i = ops[i], i+1
		}
		code, lease := ops[i][0], ops[i+1]
		if first {
			b.reset(pub, lease, names)
		}
		rest := 1
		if code == 'p' {
			rest = 4
		}
		b.add(name, code, lease, ops[i+2:i+2+rest]...)
		i += 2 + rest
	}
	return b.argv()
}
