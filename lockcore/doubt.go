package lockcore

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// Calls of unknown outcome.
//
// A lock call whose reply is lost (a timeout, a connection reset, a partition) may or may not
// have run in Redis. Assuming either way is unsafe or leaks: taken as "not run", a release that
// did run is fine but a grant that did run is a lock nobody renews or releases (the key stays
// for its whole lease, 30 s by default); taken as "run", a release that did not run leaves the
// lock held for its lease, and the owner's next attempt with the same field re-enters it in
// Redis (a count of 2 there, 1 in the table), after which its Unlock leaves it held and the
// watchdog renews it forever.
//
// So a hash field whose last call's outcome is unknown, and that no hold of this Client counts
// on any more (the caller was told the call failed), is put in doubt:
//   - it is retired: its owner takes its next holds of that lock with a new field
//     ("<owner field>:g<n>"), so nothing it sends later can be mistaken for, or undo, what was
//     sent before. Waiting out the doubt instead is not enough: the command may still be on its
//     way (held by the network, on a connection the client has given up on) and run after the
//     owner took the lock again; an unlock run then would release the new hold under its holder
//     (the randomized fault test found exactly that);
//   - the resolver clears the old field in Redis if it is there (one script: HDEL the field; if
//     that empties the lock, PUBLISH the unlock message, so waiters anywhere wake). It retries
//     until Redis answers, at most doubtRetryMax apart, so a lock left by a lost reply is freed
//     within that of the network healing, not after its lease. A late lock command on the old
//     field can still take the lock for nobody; that lasts one lease at most.
//
// Holds the table still counts are never put in doubt: a lost reply on a re-entry or a partial
// release can only leave Redis counting more holds than the table, and the Unlock that takes the
// table to zero finds that out (Redis answers "holds remain") and puts the field in doubt then.

const (
	doubtRetryMin = 10 * time.Millisecond
	doubtRetryMax = 200 * time.Millisecond
)

// clearFieldScript removes one field of a lock and, if that frees the lock, announces it as an
// unlock does.
// KEYS[1] lock, KEYS[2] unlock channel; ARGV[1] field, ARGV[2] publish command, ARGV[3] unlock
// message. Returns 1 when the field was there, 0 when not. A read-write lock's hash (one with
// "mode") is left alone: no lock script grants in one, and the field there is the same owner's
// read hold, which deleting would end under its holder.
var clearFieldScript = newScript(`
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 or redis.call('hexists', KEYS[1], 'mode') == 1 then
  return 0
end
redis.call('hdel', KEYS[1], ARGV[1])
if redis.call('exists', KEYS[1]) == 0 then
  redis.call(ARGV[2], KEYS[2], ARGV[3])
end
return 1`)

type doubtKey struct{ name, field string }

// doubtSet is the fields in doubt, the clean-ups to retry, and the resolver's wake-up.
type doubtSet struct {
	mu    sync.Mutex
	m     map[doubtKey]struct{}
	n     atomic.Int32 // len(m), read without the mutex on the hot path
	tasks []retryTask
	nt    atomic.Int32 // len(tasks)
	wake  chan struct{}
}

// retryTask is a clean-up call that got no answer, retried by the resolver until Redis answers
// it or until is past (Client.now); by then it is moot (the entry it removes is stale).
type retryTask struct {
	run   func(ctx context.Context) error
	until int64
}

// retryLater has the resolver send run again until Redis answers it, for at most for.
func (c *Client) retryLater(run func(ctx context.Context) error, within time.Duration) {
	c.doubts.mu.Lock()
	c.doubts.tasks = append(c.doubts.tasks, retryTask{run: run, until: c.now() + int64(within)})
	c.doubts.nt.Add(1)
	c.doubts.mu.Unlock()
	select {
	case c.doubts.wake <- struct{}{}:
	default:
	}
}

// runTasks sends every pending clean-up once and keeps those still unanswered.
func (c *Client) runTasks(ctx context.Context) {
	c.doubts.mu.Lock()
	tasks := c.doubts.tasks
	c.doubts.tasks = nil
	c.doubts.nt.Store(0)
	c.doubts.mu.Unlock()
	var left []retryTask
	now := c.now()
	for _, t := range tasks {
		if now > t.until {
			continue
		}
		if err := t.run(ctx); err != nil && (!isRedisReply(err) || transientReply(err)) {
			left = append(left, t)
		}
	}
	if len(left) > 0 {
		c.doubts.mu.Lock()
		c.doubts.tasks = append(c.doubts.tasks, left...)
		c.doubts.nt.Store(int32(len(c.doubts.tasks)))
		c.doubts.mu.Unlock()
	}
}

func (d *doubtSet) init() {
	d.m = make(map[doubtKey]struct{})
	d.wake = make(chan struct{}, 1)
}

// doubt puts field of lock name in doubt: its owner takes its next holds of the lock with a new
// field, and the resolver clears this one in Redis. It must not be called with a hold shard's
// mutex held.
func (c *Client) doubt(name, field string) {
	c.retire(name, field)
	c.resolveLater(name, field)
}

// resolveLater has the resolver clear field of lock name in Redis; the field must be retired
// already (see doubt) and no hold of the table may count on it any more, or the resolver leaves
// it alone.
func (c *Client) resolveLater(name, field string) {
	c.stats.doubts.Add(1)
	c.doubts.mu.Lock()
	if _, ok := c.doubts.m[doubtKey{name, field}]; !ok {
		c.doubts.m[doubtKey{name, field}] = struct{}{}
		c.doubts.n.Add(1)
	}
	c.doubts.mu.Unlock()
	select {
	case c.doubts.wake <- struct{}{}:
	default:
	}
}

// transientReply reports whether err is an error reply that the same call may not get later: the
// server refused a write for now (OOM under maxmemory), runs a long script, is loading its data
// or has no master. A clean-up refused so is retried as an unanswered one is.
func transientReply(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	if !ok || re.IsNil() {
		return false
	}
	msg := re.Error()
	for _, p := range []string{"OOM ", "BUSY ", "LOADING ", "TRYAGAIN ", "MASTERDOWN "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// isRedisReply reports whether err is an answer from Redis (an error reply, nil included).
func isRedisReply(err error) bool {
	_, ok := rueidis.IsRedisErr(err)
	return ok
}

// retire moves the owner whose current field for name is field on to the next generation of
// it: "<owner field>:g<n>". Older generations are left alone (a doubt on one of them changes
// nothing the owner would send again).
func (c *Client) retire(name, field string) {
	base := baseField(field)
	s := c.holds.shard(name)
	s.mu.Lock()
	if s.gen == nil {
		s.gen = make(map[string]int)
	}
	k := name + "\x00" + base
	if genField(base, s.gen[k]) == field {
		s.gen[k]++
		c.retired.Store(true)
	}
	s.mu.Unlock()
}

// fieldOf returns the hash field owner takes new holds of name with: its own (Owner.Field),
// unless a call of unknown outcome retired it (see retire).
func (c *Client) fieldOf(name string, owner Owner) string {
	if !c.retired.Load() {
		return owner.field
	}
	s := c.holds.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.fieldOfLocked(s, name, owner)
}

// fieldOfLocked is fieldOf with name's shard mutex held.
func (c *Client) fieldOfLocked(s *holdShard, name string, owner Owner) string {
	if !c.retired.Load() || s.gen == nil {
		return owner.field
	}
	return genField(owner.field, s.gen[name+"\x00"+owner.field])
}

// genField is generation n of the field base.
func genField(base string, n int) string {
	if n == 0 {
		return base
	}
	return base + ":g" + strconv.Itoa(n)
}

// baseField strips a generation suffix (":g<n>") from field. An owner field ends in ":<digits>",
// so the suffix cannot be confused with a client id.
func baseField(field string) string {
	i := strings.LastIndex(field, ":g")
	if i < 0 || i+2 == len(field) {
		return field
	}
	for _, r := range field[i+2:] {
		if r < '0' || r > '9' {
			return field
		}
	}
	return field[:i]
}

// unknownOutcome reports whether err leaves it unknown whether a call ran: anything but a reply
// from Redis (an error reply, nil included, is an answer) and a wait that ended before the call
// was sent (the batch queue returns ctx's error then).
func unknownOutcome(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrNotSynced) {
		// It ran on the master, but a fail-over may yet undo it: as good as unknown.
		return true
	}
	if isRedisReply(err) {
		return false
	}
	// A connection that could not be made carried nothing.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	// Calls are sent detached from the caller's ctx (see Mutex.try), so a context error can only
	// come from a wait before sending; rueidis' own timeouts report os.ErrDeadlineExceeded.
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// resolver clears the fields in doubt, retrying with back-off until each is resolved.
func (c *Client) resolver() {
	defer c.bg.Done()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.doubts.wake:
		}
		backoff := doubtRetryMin
		for c.doubts.n.Load() > 0 || c.doubts.nt.Load() > 0 {
			done := c.resolveDoubts()
			if c.doubts.nt.Load() > 0 {
				ctx, cancel := context.WithTimeout(c.ctx, time.Second)
				c.runTasks(ctx)
				cancel()
			}
			if done && c.doubts.nt.Load() == 0 {
				break
			}
			t := time.NewTimer(backoff)
			select {
			case <-c.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, doubtRetryMax)
		}
	}
}

// resolveDoubts makes one pass over the fields in doubt, pipelined; it reports whether none is
// left.
func (c *Client) resolveDoubts() bool {
	if c.doubts.n.Load() == 0 {
		return true
	}
	c.doubts.mu.Lock()
	keys := make([]doubtKey, 0, len(c.doubts.m))
	for k := range c.doubts.m {
		keys = append(keys, k)
	}
	c.doubts.mu.Unlock()
	// A field the table counts a hold on again is not cleared: that hold is real (a doubt only
	// ever covers fields no hold counts on, so this is a safeguard), and a surplus beyond it is
	// found by its Unlock.
	live := keys[:0]
	for _, k := range keys {
		if c.holds.counts(k.name, k.field) {
			c.doubts.mu.Lock()
			delete(c.doubts.m, k)
			c.doubts.n.Add(-1)
			c.doubts.mu.Unlock()
			continue
		}
		live = append(live, k)
	}
	keys = live
	calls := make([]scriptCall, 0, len(keys))
	scripts := make([]*script, 0, len(keys))
	for _, k := range keys {
		calls = append(calls, scriptCall{
			keys: []string{k.name, channelName(k.name)},
			args: []string{k.field, c.publishCmd, unlockMessage},
		})
		scripts = append(scripts, clearFieldScript)
	}
	ctx, cancel := context.WithTimeout(c.ctx, time.Second)
	defer cancel()
	res := execScripts(ctx, c.rdb, scripts, calls)
	c.doubts.mu.Lock()
	defer c.doubts.mu.Unlock()
	for i, k := range keys {
		if _, err := res[i].AsInt64(); err != nil && !isRedisReply(err) {
			// No answer (the resolver's own timeout included): try again.
			continue
		}
		// Cleared, or not there: either way no grant of this field is left that nobody holds.
		// (An error reply, such as a key of another type, cannot be cleared by retrying.)
		delete(c.doubts.m, k)
		c.doubts.n.Add(-1)
		c.stats.resolved.Add(1)
	}
	return len(c.doubts.m) == 0
}
