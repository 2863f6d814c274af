package lockcore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// Synced mode: grants the replicas have seen.
//
// On a master with replicas, a write the replicas never received is lost when a replica is
// promoted: a grant made on the old master is gone on the new one, and another client is
// granted the same lock (a double grant), or a fencing counter goes back. Redisson (3.21+,
// checkLockSyncedSlaves) sends WAIT after every lock, unlock and renewal script there. lockcore
// sends one WAIT after each pipeline of scripts instead: a batch script call, a single call, the
// watchdog's pipeline of renewals, a fenced grant. WAIT waits for the replication offset of the
// connection it runs on, so it covers every write sent on that connection before it: the
// scripts go out in one pipeline with the WAIT behind them, on one connection (rueidis sends a
// pipeline that holds a blocking command, WAIT, on a dedicated connection of its pool, so a WAIT
// that runs long holds up that pipeline alone). On a cluster the pipeline goes to one node's own
// client, never through the routed one, so that no redirect can move a script away from its
// WAIT (sync_cluster.go).
//
// A call is confirmed to its caller only when the WAIT reports every replica the master had
// connected (Redisson's availableSlaves) within Options.SyncTimeout. When it reports fewer, or
// fails, the call is not synced (a *SyncError, errors.Is ErrNotSynced): a grant is undone in
// Redis (the unlock script releases the hold just taken) and the caller gets the error; a
// release is of unknown outcome (the hold may come back with a fail-over): its field goes in
// doubt (doubt.go) and the caller gets the error; a renewal counts as failed, so the confirmed
// lease (hold.expires) moves only on synced replies and a hand-over never leans on a lease the
// replicas have not seen.
//
// The replica count comes from INFO replication (connected_slaves) of each master, asked in New
// and refreshed every DefaultSyncRefresh in the background, as Redisson refreshes its view of
// the replicas by its topology scan (scanInterval, 1 s). A master with no replica connected is
// not waited for: WAIT 0 answers at once and proves nothing. A master that had replicas and lost
// them is still waited for them for a while (syncer.expect), so that a master left behind by a
// fail-over, or cut off from its replicas, has its grants refused rather than confirmed.

// SyncMode says whether lock calls wait for the replicas to acknowledge them (see Options.Sync).
type SyncMode int

const (
	// SyncAuto waits as SyncWait does: on every master that reports connected replicas, one
	// WAIT per pipeline; a master without replicas is not waited for. The default.
	SyncAuto SyncMode = iota
	// SyncWait sends WAIT <replicas> <SyncTimeout> after each pipeline of lock scripts on a
	// master with connected replicas.
	SyncWait
	// SyncAOF sends WAITAOF <local> <replicas> <SyncTimeout> instead: local is 1 when the master
	// has AOF on (the write is fsynced on the master too), and only replicas that fsynced their
	// own AOF count, so every replica must run with AOF. Each pipeline then waits for an fsync:
	// with appendfsync everysec, up to a second. WAITAOF needs Redis 7.2 or later; an older
	// server refuses it, and every call then fails with ErrNotSynced.
	SyncAOF
	// SyncOff never waits: the fast opt-out. A fail-over can lose grants the replicas had not
	// received (double grants) and set fencing tokens back.
	SyncOff
)

// String returns the mode's option name: auto, wait, aof or off.
func (m SyncMode) String() string {
	switch m {
	case SyncAuto:
		return "auto"
	case SyncWait:
		return "wait"
	case SyncAOF:
		return "aof"
	case SyncOff:
		return "off"
	}
	return "SyncMode(" + strconv.Itoa(int(m)) + ")"
}

// Defaults of synced mode.
const (
	// DefaultSyncTimeout is the WAIT timeout: Redisson's slavesSyncTimeout.
	DefaultSyncTimeout = time.Second
	// DefaultSyncRefresh is how often the Client asks each master how many replicas it has:
	// Redisson's topology scanInterval.
	DefaultSyncRefresh = time.Second
)

// ErrNotSynced is wrapped by the error of a lock call the master's replicas did not all
// acknowledge in time (see SyncError): a lock attempt so answered was undone and is no grant; a
// release may come back with a fail-over and is left to the Client's clean-up.
var ErrNotSynced = errors.New("lockcore: replicas did not acknowledge")

// SyncError is a call whose WAIT (or WAITAOF) reported fewer replicas than the master had
// connected, or failed. errors.Is(err, ErrNotSynced) holds for it.
type SyncError struct {
	// Want is how many replicas the master had connected when the call was sent; Got how many
	// acknowledged within the timeout (0 when the WAIT itself failed).
	Want, Got int64
	// Err is the WAIT's own failure, if it failed (nil when it answered short).
	Err error
	// reply is the script's own answer (never an error reply), for the caller to tell a grant
	// (to undo) from a refusal, which wrote nothing and needs no replica.
	reply rueidis.RedisMessage
}

// Error says how many replicas acknowledged of how many.
func (e *SyncError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%v: wait for %d replicas: %v", ErrNotSynced, e.Want, e.Err)
	}
	return fmt.Sprintf("%v: %d of %d replicas within the timeout", ErrNotSynced, e.Got, e.Want)
}

// Is makes errors.Is(err, ErrNotSynced) hold.
func (e *SyncError) Is(target error) bool { return target == ErrNotSynced }

// Unwrap returns the WAIT's own failure, if any.
func (e *SyncError) Unwrap() error { return e.Err }

// replicaView is how many replicas each master had at the last refresh: one count on a single
// master (or sentinel), one per hash slot on a cluster (the count of the slot's master).
type replicaView struct {
	one   int32
	slots []int32 // nil unless cluster
	aof   bool    // the master (every master on a cluster) has AOF on
}

// syncer is a Client's synced-mode state.
type syncer struct {
	mode    SyncMode // resolved: never SyncAuto
	timeout int64    // ms
	view    atomic.Pointer[replicaView]
	// marks are the replica high-water marks per master (see expect); only New and the
	// refresher goroutine, one after the other, touch them.
	marks map[string]*replicaMark
}

// replicaForget is how long a master must report fewer replicas than it had before the Client
// waits for only those (see expect).
const replicaForget = 30 * time.Second

// replicaMark is the most replicas one master (one replication history: master_replid) has had
// connected, and since when it has reported fewer.
type replicaMark struct {
	replid   string
	high     int32
	lowSince int64 // Client.now; 0 while it reports high
}

// expect is how many replicas to wait for on the master at node, which reports live connected
// replicas and the replication id replid. A master that had replicas and reports fewer is one
// that lost them: cut off from them by a partition, or left behind by a fail-over that promoted
// one of them while it still serves clients that have not switched. Its grants are exactly
// those a fail-over loses, and waiting for only the replicas it still has (none, then: WAIT 0
// proves nothing) would confirm them. So the count does not drop with the live one: the calls
// wait for the replicas it had, fall short and fail, until it has reported fewer for
// replicaForget (a replica removed on purpose), when the lower count is taken. A new
// replication id (a promoted replica, a restarted master) starts afresh from its live count.
func (sy *syncer) expect(node, replid string, live int32, now int64) int32 {
	if sy.marks == nil {
		sy.marks = map[string]*replicaMark{}
	}
	m := sy.marks[node]
	switch {
	case m == nil || m.replid != replid:
		sy.marks[node] = &replicaMark{replid: replid, high: live}
	case live >= m.high:
		m.high, m.lowSince = live, 0
	case m.lowSince == 0:
		m.lowSince = now
	case now-m.lowSince >= int64(replicaForget):
		m.high, m.lowSince = live, 0
	}
	return sy.marks[node].high
}

// syncing reports whether lock calls wait for replicas at all.
func (c *Client) syncing() bool { return c.repl.mode != SyncOff }

// replicasFor is how many replicas the master of key had at the last refresh.
func (c *Client) replicasFor(key string) (int64, bool) {
	v := c.repl.view.Load()
	if v == nil {
		return 0, false
	}
	if v.slots != nil {
		return int64(v.slots[keySlot(key)]), v.aof
	}
	return int64(v.one), v.aof
}

// syncsOn reports whether calls on key wait for replicas: synced mode is on and key's master
// had replicas (or, with SyncAOF, AOF) at the last refresh. On a cluster one key stands for
// every master, near enough for the watchdog's deadline, which is all that asks.
func (c *Client) syncsOn(key string) bool {
	if !c.syncing() {
		return false
	}
	n, aof := c.replicasFor(key)
	return n > 0 || c.repl.mode == SyncAOF && aof
}

// waitCmd is the WAIT (or WAITAOF) to send after writes to key's master off a cluster (a
// cluster's synced calls go to a node's own client, execClusterSynced), and how many replicas it
// must report; ok is false when there is nothing to wait for (synced mode off, no replica
// connected).
func (c *Client) waitCmd(key string) (cmd rueidis.Completed, want int64, ok bool) {
	if !c.syncing() {
		return cmd, 0, false
	}
	n, aof := c.replicasFor(key)
	return c.waitFor(c.rdb, n, aof)
}

// waitFor is the WAIT (or WAITAOF) for n replicas built by rdb, aof saying whether the master
// runs with AOF; ok is false when there is nothing to wait for.
func (c *Client) waitFor(rdb rueidis.Client, n int64, aof bool) (cmd rueidis.Completed, want int64, ok bool) {
	if c.repl.mode == SyncAOF {
		local := int64(0)
		if aof {
			local = 1
		}
		if n == 0 && local == 0 {
			return cmd, 0, false
		}
		cmd = rdb.B().Waitaof().Numlocal(local).Numreplicas(n).Timeout(c.repl.timeout).Build()
	} else {
		if n == 0 {
			return cmd, 0, false
		}
		cmd = rdb.B().Wait().Numreplicas(n).Timeout(c.repl.timeout).Build()
	}
	c.stats.syncWaits.Add(1)
	return cmd.Pin(), n, true
}

// checkWait reads a WAIT or WAITAOF reply against want: nil when enough replicas acknowledged,
// else a *SyncError.
func (c *Client) checkWait(res rueidis.RedisResult, want int64) *SyncError {
	var got int64
	var err error
	if c.repl.mode == SyncAOF {
		var r []int64
		if r, err = res.AsIntSlice(); err == nil {
			if len(r) != 2 {
				err = fmt.Errorf("WAITAOF reply %v", r)
			} else {
				got = r[1]
			}
		}
	} else {
		got, err = res.AsInt64()
	}
	if err == nil && got >= want {
		return nil
	}
	c.stats.notSynced.Add(1)
	if err != nil {
		got = 0
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			// The pipeline's own deadline: no caller's context ended.
			err = errNoAnswer
		}
	}
	return &SyncError{Want: want, Got: got, Err: err}
}

// execScript runs s once, as s.exec does, followed in the same pipeline by the WAIT for the
// master of keys[0] when synced mode applies. The error is a *SyncError when the script
// answered (its answer, which is not an error reply, is then also in the error's reply) but the
// replicas did not all acknowledge; a script that failed or got no answer returns its result
// and nil, as without synced mode.
//
// A pipeline holding WAIT runs on a dedicated connection, where rueidis applies no write timeout
// of its own (a blocking command may block as long as it likes), so it gets a deadline here: the
// WAIT's timeout plus the connection's write timeout. Without one, a call into a partition would
// wait for the heal, where a pipelined call fails within the write timeout. A call with no
// answer by then returns errNoAnswer as its error (of unknown outcome, as a lost reply).
//
// A call a cluster answers TRYAGAIN (its keys' slot is migrating and some of them have moved,
// see retryTryAgain) ran nothing, and goes again after a pause, for up to tryAgainFor.
func (c *Client) execScript(ctx context.Context, s *script, keys, args []string) (rueidis.RedisResult, error) {
	res, err := c.execScriptOnce(ctx, s, keys, args)
	for pause := tryAgainPause; err == nil && isTryAgain(res.Error()) && pause <= tryAgainFor; pause *= 2 {
		if !sleepCtx(ctx, pause) {
			break
		}
		res, err = c.execScriptOnce(ctx, s, keys, args)
	}
	return res, err
}

// execScriptOnce is one execScript call. On a cluster in synced mode the script and its WAIT go
// to one node, on one connection, never redirected apart (execClusterSynced).
func (c *Client) execScriptOnce(ctx context.Context, s *script, keys, args []string) (rueidis.RedisResult, error) {
	if c.batch.cluster && c.syncing() {
		dctx, cancel := context.WithTimeout(ctx, c.syncDeadline())
		defer cancel()
		res, unsynced := c.execClusterSynced(dctx, []*script{s}, []scriptCall{{keys: keys, args: args}})
		return c.settleSynced(ctx, dctx, res[0], unsynced[0])
	}
	wait, want, ok := c.waitCmd(keys[0])
	if !ok {
		return s.exec(ctx, c.rdb, keys, args), nil
	}
	dctx, cancel := context.WithTimeout(ctx, c.syncDeadline())
	defer cancel()
	res := c.rdb.DoMulti(dctx, s.evalsha(c.rdb, keys, args), wait)
	if isNoScript(res[0].Error()) {
		// The EVALSHA ran nothing: send the body, with a WAIT of its own, unless the master has
		// no replica to wait for by now (a fail-over's new master before its replicas attach,
		// whose empty script cache is what answered NOSCRIPT): then the body goes alone, as
		// at the top.
		if wait, want, ok = c.waitCmd(keys[0]); !ok {
			return c.rdb.Do(ctx, s.eval(c.rdb, keys, args)), nil
		}
		res = c.rdb.DoMulti(dctx, s.eval(c.rdb, keys, args), wait)
	}
	if res[0].NonRedisError() != nil && dctx.Err() != nil && ctx.Err() == nil {
		return res[0], errNoAnswer
	}
	if !answered(res[0]) {
		// Failed or no answer: the caller settles that as without synced mode.
		return res[0], nil
	}
	if se := c.checkWait(res[1], want); se != nil {
		se.reply, _ = res[0].ToMessage()
		return res[0], se
	}
	return res[0], nil
}

// settleSynced returns a synced call's result res and verdict unsynced as execScript does:
// errNoAnswer when res got no answer within dctx's deadline (ctx itself not done), else the
// *SyncError, if any.
func (c *Client) settleSynced(ctx, dctx context.Context, res rueidis.RedisResult, unsynced *SyncError) (rueidis.RedisResult, error) {
	if res.NonRedisError() != nil && dctx.Err() != nil && ctx.Err() == nil {
		return res, errNoAnswer
	}
	if unsynced != nil {
		return res, unsynced
	}
	return res, nil
}

// errNoAnswer is the error of a synced call that got no answer within its deadline (see
// execScript). It wraps os.ErrDeadlineExceeded, as rueidis' own timeouts do, and is no context
// error: the call was sent, and may have run (unknownOutcome).
var errNoAnswer = fmt.Errorf("lockcore: no answer within the WAIT timeout and the write timeout: %w", os.ErrDeadlineExceeded)

// syncFailed returns execScript's error when it is the call's own failure (errNoAnswer), nil
// when it is none or a *SyncError (the script answered).
func syncFailed(err error) error {
	if err != nil && !errors.Is(err, ErrNotSynced) {
		return err
	}
	return nil
}

// syncDeadline bounds a synced pipeline (see execScript): the WAIT's timeout plus the
// connection's write timeout, rueidis' default (ten keep-alive intervals) when not set.
func (c *Client) syncDeadline() time.Duration {
	wt := c.opt.Redis.ConnWriteTimeout
	if wt <= 0 {
		ka := c.opt.Redis.Dialer.KeepAlive
		if ka <= 0 {
			ka = defaultKeepAlive
		}
		wt = 10 * ka
	}
	return c.opt.SyncTimeout + wt
}

// defaultKeepAlive is rueidis' default Dialer.KeepAlive, from which it derives its default
// write timeout (ten of them).
const defaultKeepAlive = time.Second

// execRelease runs a release script (one that answers an integer, or nil when the owner holds
// nothing) synced, as execScript does, and returns its answer; a release that ran but whose
// replicas did not all acknowledge returns the *SyncError, which callers settle as a release
// of unknown outcome (a fail-over may bring the hold back). A nil answer wrote nothing and is
// returned as it is.
func (c *Client) execRelease(ctx context.Context, s *script, keys, args []string) (int64, error) {
	res, unsynced := c.execScript(ctx, s, keys, args)
	if f := syncFailed(unsynced); f != nil {
		return 0, f
	}
	n, err := res.AsInt64()
	if unsynced != nil && err == nil {
		return 0, unsynced
	}
	return n, err
}

// answered reports whether a script's result is an answer that may have written: not a failure
// (a nil reply is an answer).
func answered(r rueidis.RedisResult) bool {
	err := r.Error()
	return err == nil || rueidis.IsRedisNil(err)
}

// granted reports whether a lock script's answer, carried by a *SyncError, was a grant: nil for
// the Mutex scripts, {-1, token} for the fenced one.
func (e *SyncError) granted() bool {
	if e.reply.IsNil() {
		return true
	}
	if a, err := e.reply.ToArray(); err == nil && len(a) == 2 {
		n, _ := a[0].AsInt64()
		return n == -1
	}
	return false
}

// execScriptsSynced runs calls[i] with scripts[i], all in one pipeline as execScripts does, the
// master's calls followed by one WAIT for its replicas; on a cluster, each node's calls in one
// pipeline on one of its connections with one WAIT behind them (execClusterSynced). It returns
// each call's result and, per call, a *SyncError when its master's replicas did not all
// acknowledge (nil otherwise).
func (c *Client) execScriptsSynced(ctx context.Context, scripts []*script, calls []scriptCall) ([]rueidis.RedisResult, []*SyncError) {
	unsynced := make([]*SyncError, len(calls))
	if !c.syncing() || len(calls) == 0 {
		return execScripts(ctx, c.rdb, scripts, calls), unsynced
	}
	if c.batch.cluster {
		return c.execClusterSynced(ctx, scripts, calls)
	}
	// groupOf[i] is the index of call i's WAIT in waits: one master, so one WAIT, or none.
	groupOf := make([]int, len(calls))
	var waits []rueidis.Completed
	var wants []int64
	g := -1
	if w, want, ok := c.waitCmd(calls[0].keys[0]); ok {
		g = 0
		waits, wants = append(waits, w), append(wants, want)
	}
	for i := range groupOf {
		groupOf[i] = g
	}
	if len(waits) == 0 {
		return execScripts(ctx, c.rdb, scripts, calls), unsynced
	}
	cmds := make(rueidis.Commands, len(calls), len(calls)+len(waits))
	for i, call := range calls {
		cmds[i] = scripts[i].evalsha(c.rdb, call.keys, call.args)
	}
	all := c.rdb.DoMulti(ctx, append(cmds, waits...)...)
	res := all[:len(calls)]
	// verdict[i] is the reply of the WAIT that covers call i.
	verdict := make([]rueidis.RedisResult, len(calls))
	for i, g := range groupOf {
		if g >= 0 {
			verdict[i] = all[len(calls)+g]
		}
	}
	retryWant := map[int]int64{} // the replicas a NOSCRIPT-retried call's own WAIT asked for
	if retry := noScript(res); len(retry) > 0 {
		// The EVALSHAs answered NOSCRIPT ran nothing: their bodies go again, with WAITs of
		// their own, whose verdict is theirs (the first WAITs covered nothing they wrote).
		cmds = cmds[:0]
		for _, i := range retry {
			cmds = append(cmds, scripts[i].eval(c.rdb, calls[i].keys, calls[i].args))
		}
		// A WAIT per group again, where its master still has replicas to wait for: after a
		// fail-over the new master, whose empty script cache answered NOSCRIPT, may have none
		// attached yet, and then its calls go unwaited, as when no master has any (above).
		again := make([]int, len(waits)) // group g's WAIT in the retry; -1: none
		var rewaits []rueidis.Completed
		var rewants []int64
		for g := range waits {
			again[g] = -1
			if w, want, ok := c.waitCmd(calls[firstOf(groupOf, g)].keys[0]); ok {
				again[g] = len(rewaits)
				rewaits = append(rewaits, w)
				rewants = append(rewants, want)
			}
		}
		second := c.rdb.DoMulti(ctx, append(cmds, rewaits...)...)
		for j, i := range retry {
			res[i] = second[j]
			switch g := groupOf[i]; {
			case g < 0:
			case again[g] < 0:
				groupOf[i] = -1 // not waited for after all
			default:
				verdict[i] = second[len(retry)+again[g]]
				retryWant[i] = rewants[again[g]]
			}
		}
	}
	for i, g := range groupOf {
		if g < 0 || !answered(res[i]) {
			// Not waited for, or failed: the caller settles that as without synced mode.
			continue
		}
		want, retried := retryWant[i]
		if !retried {
			want = wants[g]
		}
		if se := c.checkWait(verdict[i], want); se != nil {
			se.reply, _ = res[i].ToMessage()
			unsynced[i] = se
		}
	}
	return res, unsynced
}

// firstOf is the index of the first call of WAIT group g.
func firstOf(groupOf []int, g int) int {
	for i, x := range groupOf {
		if x == g {
			return i
		}
	}
	return 0
}

// syncRefresher refreshes the replica counts every Options.SyncRefresh while synced mode is on,
// and on a cluster the slot → master view (and, until it has answered, the cross-slot probe),
// also soon after a batch found the view stale (batcher.stale), at most once per refreshGap.
func (c *Client) syncRefresher() {
	defer c.bg.Done()
	tick := time.NewTicker(c.opt.SyncRefresh)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		case <-c.batch.kick: // nil, never ready, off a cluster
			if wait := refreshGap - time.Since(last); wait > 0 {
				select {
				case <-c.ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}
		last = time.Now()
		ctx, cancel := context.WithTimeout(c.ctx, c.opt.SyncRefresh)
		// A failed refresh keeps the last view: a master that does not answer INFO does not
		// answer the lock scripts either.
		if c.refreshReplicas(ctx) == nil && c.batch.cluster {
			c.probeCross(ctx)
		}
		cancel()
	}
}

// refreshReplicas asks the masters how many replicas they have connected, and whether they run
// with AOF, and installs the new view.
func (c *Client) refreshReplicas(ctx context.Context) error {
	if !c.batch.cluster {
		info, err := c.rdb.Do(ctx, c.rdb.B().Info().Section("replication").Build().Pin()).ToString()
		if err != nil {
			return fmt.Errorf("lockcore: ask the master for its replicas: %w", err)
		}
		replid, _ := infoField(info, "master_replid")
		v := &replicaView{one: c.repl.expect("", replid, int32(infoInt(info, "connected_slaves")), c.now())}
		if c.repl.mode == SyncAOF {
			if v.aof, err = c.aofOn(ctx, c.rdb); err != nil {
				return err
			}
		}
		c.repl.view.Store(v)
		return nil
	}
	return c.refreshCluster(ctx)
}

// aofOn asks a master whether it runs with AOF.
func (c *Client) aofOn(ctx context.Context, node rueidis.Client) (bool, error) {
	info, err := node.Do(ctx, node.B().Info().Section("persistence").Build().Pin()).ToString()
	if err != nil {
		return false, fmt.Errorf("lockcore: ask the master about AOF: %w", err)
	}
	return infoInt(info, "aof_enabled") == 1, nil
}

// infoInt is the integer value of "name:value" in an INFO reply, 0 if absent.
func infoInt(info, name string) int {
	v, _ := infoField(info, name)
	n, _ := strconv.Atoi(strings.TrimSpace(v))
	return n
}

// TRYAGAIN: a cluster refuses a command whose keys are of a slot being migrated when some of
// them are on the source and others gone (an unlock declares the lock and its channel name, and
// only the lock exists; a batch declares several locks of the slot), before running anything:
// the client is to retry once the keys have moved. rueidis retries it only for commands marked
// retryable, which a script must not be (a retry after a lost reply could run it twice), so
// lockcore retries TRYAGAIN itself, with pauses of tryAgainPause doubling up to tryAgainFor
// (about 0.5 s in all), and then returns it.
const (
	tryAgainPause = 2 * time.Millisecond
	tryAgainFor   = 256 * time.Millisecond
)

// isTryAgain reports whether err is a cluster's TRYAGAIN.
func isTryAgain(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && re.IsTryAgain()
}

// sleepCtx pauses for d, or less if ctx ends first; false if it did.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
