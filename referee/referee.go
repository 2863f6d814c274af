// Package referee is a safety checker that spans machines: a separate Redis (not the one under
// test, and given no faults) on which every holder of a lock marks its critical section, after
// acquiring and before releasing. A holder that finds another mark on its lock is a violation,
// counted on the referee with both holders named, whatever process or machine either runs on
// and whatever lock library took the lock: the referee never trusts the lock it checks.
//
// Keys, all under lockbench:referee:{RUN}: — "k:KEY", a hash of the holders inside lock KEY
// (holder → "w" exclusive, "r" shared), each mark expiring after MarkTTL so that a crashed
// holder's does not outlive the run; "violations", the run's count; "examples", the first
// results.MaxRefereeExamples violations named.
package referee

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// Defaults, written down once.
const (
	// MarkTTL is how long a mark lasts if its holder never clears it (crashed, or its referee
	// call lost): longer than any hold, short enough not to outlive the run by much.
	MarkTTL = 10 * time.Minute
	// KeepTTL is how long the run's count and examples are kept for whoever reads them last.
	KeepTTL = 24 * time.Hour
	// CallTimeout bounds one mark: a referee that does not answer costs a holder at most this,
	// inside its critical section, and counts an error.
	CallTimeout = 2 * time.Second
	// EnvPassword holds the referee's password when its URL has none: the data nodes'
	// password is not sent to another server.
	EnvPassword = "LOCKBENCH_REFEREE_PASSWORD"
	keyPrefix   = "lockbench:referee:"
)

// Errors, checked with errors.Is.
var (
	// ErrBadInput: an address the referee cannot be reached by.
	ErrBadInput = errors.New("referee: bad input")
	// ErrUnderTest: the referee is a Redis of the deployment under test, where the lock's own
	// faults and load would reach it.
	ErrUnderTest = errors.New("referee: the referee is the Redis under test")
)

// Options say which referee a process uses and who it is. The zero value of a field means its
// default.
type Options struct {
	// Addr is the referee, as users write it: host:port, redis://[user[:password]@]host[:port][/db],
	// rediss://… or unix:///path.
	Addr string
	// CAFile verifies a rediss:// referee's certificate (default: the system's roots).
	CAFile string
	// RunID scopes the marks and counts: every process of one run gives the same.
	RunID string
	// Process names this process in the holders it marks, e.g. "p1@host:4242"; with the worker
	// id it makes the holder's name.
	Process string
	// Getenv reads EnvPassword; nil means the process environment.
	Getenv func(string) string
}

// Settings checks opt's address and credentials without connecting.
func Settings(opt Options) (*conn.Settings, error) {
	if opt.Addr == "" {
		return nil, fmt.Errorf("%w: no address", ErrBadInput)
	}
	s, err := conn.NewSide(opt.Addr, opt.CAFile, EnvPassword, opt.Getenv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return s, nil
}

// Referee is one process's connection to the referee. It is safe for concurrent use.
type Referee struct {
	c        rueidis.Client
	s        *conn.Settings
	run      string
	process  string
	entries  atomic.Int64
	viol     atomic.Int64
	errs     atomic.Int64
	mu       sync.Mutex
	examples []string
}

// Open connects to the referee and checks that it answers.
func Open(ctx context.Context, opt Options) (*Referee, error) {
	s, err := Settings(opt)
	if err != nil {
		return nil, err
	}
	c, err := s.OpenSingle(ctx)
	if err != nil {
		return nil, fmt.Errorf("referee %s: %w", s, err)
	}
	return &Referee{c: c, s: s, run: opt.RunID, process: opt.Process}, nil
}

// Close closes the connection.
func (r *Referee) Close() { r.c.Close() }

// String is the referee's address, any password replaced by ***.
func (r *Referee) String() string { return r.s.String() }

func (r *Referee) key(suffix string) string { return keyPrefix + "{" + r.run + "}:" + suffix }

func (r *Referee) holder(worker int) string { return r.process + "/w" + strconv.Itoa(worker) }

// enterScript marks ARGV[1] inside lock KEYS[1] ("w": alone, "r": beside other readers). A
// holder already inside that this one may not be beside is a violation: counted in KEYS[2], named
// in KEYS[3] (the first few), and returned. The mark is made either way, so the next one in is
// checked against both.
var enterScript = rueidis.NewLuaScript(`
local clash = false
local marks = redis.call('HGETALL', KEYS[1])
for i = 1, #marks, 2 do
  if marks[i] ~= ARGV[1] and (ARGV[2] == 'w' or marks[i + 1] == 'w') then
    clash = marks[i]
    break
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if not clash then
  return false
end
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
if redis.call('LLEN', KEYS[3]) < tonumber(ARGV[5]) then
  redis.call('RPUSH', KEYS[3], ARGV[6] .. ': ' .. clash .. ' and ' .. ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
return clash
`)

// Enter marks worker as a holder of lock key (shared: a reader). It implements
// workloads.Referee: a failed call is counted, not returned.
func (r *Referee) Enter(key, worker int, shared bool) {
	mode := "w"
	if shared {
		mode = "r"
	}
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	lock := "lock " + strconv.Itoa(key)
	res := enterScript.Exec(ctx, r.c,
		[]string{r.key("k:" + strconv.Itoa(key)), r.key("violations"), r.key("examples")},
		[]string{r.holder(worker), mode, strconv.FormatInt(MarkTTL.Milliseconds(), 10), strconv.FormatInt(KeepTTL.Milliseconds(), 10),
			strconv.Itoa(results.MaxRefereeExamples), lock})
	r.entries.Add(1)
	other, err := res.ToString()
	switch {
	case rueidis.IsRedisNil(err):
	case err != nil:
		r.errs.Add(1)
	default:
		r.viol.Add(1)
		r.mu.Lock()
		if len(r.examples) < results.MaxRefereeExamples {
			r.examples = append(r.examples, lock+": "+other+" and "+r.holder(worker))
		}
		r.mu.Unlock()
	}
}

// Exit clears worker's mark on lock key, and only its own. It implements workloads.Referee.
func (r *Referee) Exit(key, worker int) {
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	if err := r.c.Do(ctx, r.c.B().Hdel().Key(r.key("k:"+strconv.Itoa(key))).Field(r.holder(worker)).Build()).Error(); err != nil {
		r.errs.Add(1)
	}
}

// Result returns what this process's marks found.
func (r *Referee) Result() *results.Referee {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &results.Referee{Addr: r.s.String(), Entries: r.entries.Load(), Violations: r.viol.Load(),
		Examples: append([]string(nil), r.examples...), Errors: r.errs.Load()}
}

// RunViolations reads the run's count and examples from the referee itself: every process's,
// also those of a process that crashed before it reported.
func (r *Referee) RunViolations(ctx context.Context) (int64, []string, error) {
	n, err := r.c.Do(ctx, r.c.B().Get().Key(r.key("violations")).Build()).AsInt64()
	if err != nil && !rueidis.IsRedisNil(err) {
		return 0, nil, fmt.Errorf("referee %s: %w", r, err)
	}
	ex, err := r.c.Do(ctx, r.c.B().Lrange().Key(r.key("examples")).Start(0).Stop(-1).Build()).AsStrSlice()
	if err != nil && !rueidis.IsRedisNil(err) {
		return 0, nil, fmt.Errorf("referee %s: %w", r, err)
	}
	return n, ex, nil
}

// Clear removes the run's count, examples and any mark left on its keys locks (a holder that
// crashed inside).
func (r *Referee) Clear(ctx context.Context, keys int) error {
	const batch = 1000 // keys per UNLINK: one command per thousand locks, not one per lock
	names := []string{r.key("violations"), r.key("examples")}
	for k := range keys {
		names = append(names, r.key("k:"+strconv.Itoa(k)))
	}
	for len(names) > 0 {
		n := min(batch, len(names))
		if err := r.c.Do(ctx, r.c.B().Unlink().Key(names[:n]...).Build()).Error(); err != nil {
			return fmt.Errorf("referee %s: %w", r, err)
		}
		names = names[n:]
	}
	return nil
}
