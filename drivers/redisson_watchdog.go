package drivers

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// redissonRenewLua extends the lease if the owner field still holds the lock.
// KEYS[1] lock; ARGV[1] lease ms; ARGV[2] owner field. Returns 1 if renewed, 0 if not held.
const redissonRenewLua = `
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0`

// redissonReadRenewLua extends a read-write lock held in read mode by the owner field: the hash
// and every reader's per-hold timeout keys, as Redisson's RedissonReadLock renews them all.
// KEYS[1] lock, KEYS[2] the lock's key prefix "{name}"; ARGV[1] lease ms; ARGV[2] reader field.
// Returns 1 if renewed, 0 if the owner holds no read hold.
const redissonReadRenewLua = `
if redis.call('hget', KEYS[1], ARGV[2]) == false then
  return 0
end
redis.call('pexpire', KEYS[1], ARGV[1])
if redis.call('hlen', KEYS[1]) > 1 then
  for _, f in ipairs(redis.call('hkeys', KEYS[1])) do
    local n = tonumber(redis.call('hget', KEYS[1], f))
    if n then
      for i = n, 1, -1 do
        redis.call('pexpire', KEYS[2] .. ':' .. f .. ':rwlock_timeout:' .. i, ARGV[1])
      end
    end
  end
end
return 1`

// redissonRenewKind says which renewal script a held lock needs.
type redissonRenewKind uint8

const (
	// renewLock is an RLock, a fair lock or a read-write lock's write hold: the hash alone.
	renewLock redissonRenewKind = iota
	// renewRead is a read-write lock's read holds: the hash and the per-hold timeout keys.
	renewRead
)

// redissonWatchdog renews leases the way Redisson 3.x did before its batched renewals (3.44): one
// timer per held lock, firing lease/3 after the lock was taken or last renewed, each sending its
// own renewal script and rescheduling itself while the lock is still held. It is safe for
// concurrent use.
type redissonWatchdog struct {
	rdb      redis.UniversalClient
	leaseArg string
	interval time.Duration
	ctx      context.Context // ended by close: renewals in flight give up
	cancel   context.CancelFunc

	mu      sync.Mutex
	entries map[redissonRenewKey]*redissonRenewal
	closed  bool
	running sync.WaitGroup // renewals in flight; Add only under mu while not closed
	// renewals counts the renewals that found the lock held (see RenewalCounter).
	renewals atomic.Int64
}

// redissonRenewal is Redisson's ExpirationEntry: the holds of one lock name by this client (one
// owner field per hold, so a reentrant owner appears once per level) and the lock's timer. The
// read and the write holds of one read-write lock have an entry each (Redisson shares one, which
// renews with the script of whichever half came first).
type redissonRenewal struct {
	name   string
	kind   redissonRenewKind
	fields []string
	timer  *time.Timer
}

// redissonRenewKey is the entries map key of name's holds of kind.
type redissonRenewKey struct {
	name string
	kind redissonRenewKind
}

func newRedissonWatchdog(rdb redis.UniversalClient, lease time.Duration) *redissonWatchdog {
	wd := &redissonWatchdog{
		rdb:      rdb,
		leaseArg: msString(lease),
		interval: lease / 3,
		entries:  map[redissonRenewKey]*redissonRenewal{},
	}
	wd.ctx, wd.cancel = context.WithCancel(context.Background())
	return wd
}

// add records a hold of name of kind by field, starting the lock's timer if it is the first.
func (wd *redissonWatchdog) add(name string, kind redissonRenewKind, field string) {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.closed {
		return
	}
	k := redissonRenewKey{name, kind}
	if e := wd.entries[k]; e != nil {
		e.fields = append(e.fields, field)
		return
	}
	e := &redissonRenewal{name: name, kind: kind, fields: []string{field}}
	e.timer = time.AfterFunc(wd.interval, func() { wd.renew(e) })
	wd.entries[k] = e
}

// remove forgets one hold of name by field after an unlock, whatever its outcome (as Redisson
// does: a lock whose release failed must expire rather than be kept alive), stopping the timer
// with the last hold.
func (wd *redissonWatchdog) remove(name string, kind redissonRenewKind, field string) {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	k := redissonRenewKey{name, kind}
	e := wd.entries[k]
	if e == nil {
		return
	}
	if i := slices.Index(e.fields, field); i >= 0 {
		e.fields = slices.Delete(e.fields, i, i+1)
	}
	if len(e.fields) == 0 {
		e.timer.Stop()
		delete(wd.entries, k)
	}
}

// renew runs when e's timer fires: one renewal command for this lock alone.
func (wd *redissonWatchdog) renew(e *redissonRenewal) {
	k := redissonRenewKey{e.name, e.kind}
	wd.mu.Lock()
	if wd.closed || wd.entries[k] != e || len(e.fields) == 0 {
		wd.mu.Unlock()
		return
	}
	field := e.fields[0]
	wd.running.Add(1)
	wd.mu.Unlock()
	defer wd.running.Done()

	// Redisson drops a lock's renewal for good after one failed attempt (below), so the attempt
	// may take as long as the lease it renews still runs: it fired interval after the lease
	// was last set, which leaves 2 × interval. (A bound of one interval failed a renewal, and so
	// expired a held lock, when a loaded CI machine delayed one 300 ms-lease renewal by 100 ms.)
	ctx, cancel := context.WithTimeout(wd.ctx, 2*wd.interval)
	var n int64
	var err error
	if e.kind == renewRead {
		n, err = wd.rdb.Eval(ctx, redissonReadRenewLua, []string{e.name, redissonKeyPrefix(e.name)}, wd.leaseArg, field).Int64()
	} else {
		n, err = wd.rdb.Eval(ctx, redissonRenewLua, []string{e.name}, wd.leaseArg, field).Int64()
	}
	cancel()

	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.closed || wd.entries[k] != e {
		return
	}
	if err != nil || n == 0 {
		// Redisson stops renewing on an error (it logs it) and when the lock is no longer held.
		delete(wd.entries, k)
		return
	}
	wd.renewals.Add(1)
	e.timer.Reset(wd.interval)
}

// close stops every timer and waits for renewals in flight.
func (wd *redissonWatchdog) close() {
	wd.mu.Lock()
	wd.closed = true
	for _, e := range wd.entries {
		e.timer.Stop()
	}
	wd.entries = nil
	wd.mu.Unlock()
	wd.cancel()
	wd.running.Wait()
}
