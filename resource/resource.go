// Package resource is the data a lock protects, kept on the safety referee's Redis (package
// referee), so that a run can count what a lock's failures cost the data and not only how many
// holders it let in. Every holder writes to the resource of its lock as its critical section
// starts and as it ends, with its grant's fencing token when its lock has one.
//
// Two kinds: Fenced keeps the highest token it has accepted per lock and rejects a write with a
// lower one (a stale holder, whose lease ran out, come back after a later grant); Plain accepts
// every write. Both count a corrupt write: an accepted write that ends a holder's critical
// section after another holder's write fell inside it — two read-modify-writes interleaved on
// the protected data. The resource judges from what reaches it, not from the lock: which holder
// wrote last, and the tokens. A holder superseded while it slept whose late write lands before
// the next holder's first write does no harm the data could show, and is not counted.
//
// Keys, all under lockbench:resource:{RUN}: — "r:KEY", a hash of lock KEY's state ("max": the
// highest token accepted, "last": the holder of the last accepted write), expiring after
// referee.MarkTTL; "counts", a hash of the run's corrupt and stale writes over every process.
package resource

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/lockbench/lockbench/referee"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// Kinds of resource, as --resource names them.
const (
	// Fenced rejects a write whose fencing token is below the highest it accepted for the lock.
	Fenced = "fenced"
	// Plain accepts every write: what a resource that knows nothing of fencing tokens does.
	Plain = "plain"
)

const keyPrefix = "lockbench:resource:"

// ErrBadInput wraps an unknown kind.
var ErrBadInput = errors.New("resource: bad input")

// CheckKind returns an error wrapping ErrBadInput unless kind is Fenced or Plain.
func CheckKind(kind string) error {
	if kind != Fenced && kind != Plain {
		return fmt.Errorf("%w: unknown resource %q: want %s or %s", ErrBadInput, kind, Fenced, Plain)
	}
	return nil
}

// Options say which resource a process writes to and who it is. Referee's Addr, CAFile, RunID,
// Process and Getenv say where the resource is kept and who writes: the same as the referee's.
type Options struct {
	// Kind is Fenced or Plain.
	Kind    string
	Referee referee.Options
}

// Resource is one process's connection to the run's resource. It is safe for concurrent use.
type Resource struct {
	c       rueidis.Client
	kind    string
	run     string
	process string
	writes  atomic.Int64
	tokens  atomic.Int64
	corrupt atomic.Int64
	stale   atomic.Int64
	errs    atomic.Int64
}

// Open connects to the referee's Redis, where the resource is kept, and checks that it answers.
func Open(ctx context.Context, opt Options) (*Resource, error) {
	if err := CheckKind(opt.Kind); err != nil {
		return nil, err
	}
	s, err := referee.Settings(opt.Referee)
	if err != nil {
		return nil, err
	}
	c, err := s.OpenSingle(ctx)
	if err != nil {
		return nil, fmt.Errorf("resource on %s: %w", s, err)
	}
	return &Resource{c: c, kind: opt.Kind, run: opt.Referee.RunID, process: opt.Referee.Process}, nil
}

// Close closes the connection.
func (r *Resource) Close() { r.c.Close() }

func (r *Resource) key(suffix string) string { return keyPrefix + "{" + r.run + "}:" + suffix }

// What writeScript answers.
const (
	accepted = 0
	corrupt  = 1
	stale    = 2
)

// writeScript writes as holder ARGV[2] to the state KEYS[1] of one lock. ARGV[1]: "fenced" or
// "plain"; ARGV[3]: the token, "" for none; ARGV[4]: "e" for a write that ends the holder's
// critical section; ARGV[5], ARGV[6]: the TTLs of the state and of the run's counts KEYS[2].
// A fenced resource rejects a token below the highest it accepted (an equal one is the same
// grant's). An accepted end write after another holder's accepted write is corrupt: that write
// fell inside this holder's section.
var writeScript = rueidis.NewLuaScript(`
local st = redis.call('HMGET', KEYS[1], 'max', 'last')
local max, last, tok = tonumber(st[1]), st[2], tonumber(ARGV[3])
if ARGV[1] == 'fenced' and tok and max and tok < max then
  redis.call('HINCRBY', KEYS[2], 'stale', 1)
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
  return 2
end
local res = 0
if ARGV[4] == 'e' and last and last ~= ARGV[2] then
  redis.call('HINCRBY', KEYS[2], 'corrupt', 1)
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
  res = 1
end
if tok and (not max or tok > max) then
  redis.call('HSET', KEYS[1], 'max', ARGV[3], 'last', ARGV[2])
else
  redis.call('HSET', KEYS[1], 'last', ARGV[2])
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return res
`)

// Write writes as worker to the resource of lock key, with token when hasToken; end says
// whether the write ends the worker's critical section. It implements workloads.Resource: a
// failed call is counted, not returned, and costs at most referee.CallTimeout.
func (r *Resource) Write(key, worker int, token int64, hasToken, end bool) {
	ctx, cancel := context.WithTimeout(context.Background(), referee.CallTimeout)
	defer cancel()
	tok, phase := "", "b"
	if hasToken {
		tok = strconv.FormatInt(token, 10)
		r.tokens.Add(1)
	}
	if end {
		phase = "e"
	}
	r.writes.Add(1)
	res, err := writeScript.Exec(ctx, r.c,
		[]string{r.key("r:" + strconv.Itoa(key)), r.key("counts")},
		[]string{r.kind, r.process + "/w" + strconv.Itoa(worker), tok, phase,
			strconv.FormatInt(referee.MarkTTL.Milliseconds(), 10), strconv.FormatInt(referee.KeepTTL.Milliseconds(), 10)}).AsInt64()
	switch {
	case err != nil:
		r.errs.Add(1)
	case res == corrupt:
		r.corrupt.Add(1)
	case res == stale:
		r.stale.Add(1)
	}
}

// Result returns what this process's writes found. LeasesLostAtRelease is the workload's to
// fill.
func (r *Resource) Result() *results.Resource {
	return &results.Resource{Kind: r.kind, Writes: r.writes.Load(), TokenWrites: r.tokens.Load(),
		CorruptWrites: r.corrupt.Load(), StaleRejected: r.stale.Load(), Errors: r.errs.Load()}
}

// RunCounts reads the run's corrupt and stale writes from the resource itself: every
// process's, also those of a process that crashed before it reported.
func (r *Resource) RunCounts(ctx context.Context) (corruptWrites, staleRejected int64, err error) {
	m, err := r.c.Do(ctx, r.c.B().Hgetall().Key(r.key("counts")).Build()).AsIntMap()
	if err != nil && !rueidis.IsRedisNil(err) {
		return 0, 0, fmt.Errorf("resource: %w", err)
	}
	return m["corrupt"], m["stale"], nil
}

// Clear removes the run's counts and the state of its keys locks.
func (r *Resource) Clear(ctx context.Context, keys int) error {
	const batch = 1000 // keys per UNLINK, as the referee's Clear
	names := []string{r.key("counts")}
	for k := range keys {
		names = append(names, r.key("r:"+strconv.Itoa(k)))
	}
	for len(names) > 0 {
		n := min(batch, len(names))
		if err := r.c.Do(ctx, r.c.B().Unlink().Key(names[:n]...).Build()).Error(); err != nil {
			return fmt.Errorf("resource: %w", err)
		}
		names = names[n:]
	}
	return nil
}
