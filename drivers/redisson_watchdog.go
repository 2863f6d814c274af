package drivers

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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

// redissonRenewBatchLua extends the leases of up to redissonRenewBatch locks of one slot, each if
// its owner field still holds it, as Redisson 3.44+'s LockRenewalScheduler does.
// KEYS the locks; ARGV[1] lease ms, ARGV[1+i] the owner field of KEYS[i]. Returns one 1 (renewed)
// or 0 (not held) per lock.
const redissonRenewBatchLua = `
local renewed = {}
for i = 1, #KEYS do
  if redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1 then
    redis.call('pexpire', KEYS[i], ARGV[1])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed`

// The renewal scripts as sent.
var (
	rsRenew      = newRedissonScript(redissonRenewLua)
	rsReadRenew  = newRedissonScript(redissonReadRenewLua)
	rsRenewBatch = newRedissonScript(redissonRenewBatchLua)
)

// redissonWatchdog renews leases the way the profile's Redisson does. Before 3.44: one timer per
// held lock, firing lease/3 after the lock was taken or last renewed, each sending its own
// renewal script and rescheduling itself while the lock is still held. From 3.44 (batched): one
// timer per client, every lease/3, renewing the held locks up to redissonRenewBatch per script,
// grouped by hash tag so that each script's keys share a slot (read-write locks' read holds,
// whose renewal touches every reader's timeout keys, still one script each). It is safe for
// concurrent use.
type redissonWatchdog struct {
	tr       *redissonTransport
	batched  bool
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

func newRedissonWatchdog(tr *redissonTransport, lease time.Duration) *redissonWatchdog {
	wd := &redissonWatchdog{
		tr:       tr,
		batched:  tr.profile.batchedRenewals,
		leaseArg: msString(lease),
		interval: lease / 3,
		entries:  map[redissonRenewKey]*redissonRenewal{},
	}
	wd.ctx, wd.cancel = context.WithCancel(context.Background())
	if wd.batched {
		wd.running.Add(1)
		go wd.tick()
	}
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
	if !wd.batched {
		e.timer = time.AfterFunc(wd.interval, func() { wd.renew(e) })
	}
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
		if e.timer != nil {
			e.timer.Stop()
		}
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
		n, err = wd.tr.eval(ctx, true, rsReadRenew, []string{e.name, redissonKeyPrefix(e.name)}, wd.leaseArg, field).Int64()
	} else {
		n, err = wd.tr.eval(ctx, true, rsRenew, []string{e.name}, wd.leaseArg, field).Int64()
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
		if e.timer != nil {
			e.timer.Stop()
		}
	}
	wd.entries = nil
	wd.mu.Unlock()
	wd.cancel()
	wd.running.Wait()
}

// tick is the batched watchdog's timer: every interval it renews every held lock.
func (wd *redissonWatchdog) tick() {
	defer wd.running.Done()
	t := time.NewTicker(wd.interval)
	defer t.Stop()
	for {
		select {
		case <-wd.ctx.Done():
			return
		case <-t.C:
			wd.renewAll()
		}
	}
}

// renewAll sends the batched renewals of one tick and forgets the locks no longer held.
func (wd *redissonWatchdog) renewAll() {
	wd.mu.Lock()
	if wd.closed {
		wd.mu.Unlock()
		return
	}
	groups := map[string][]*redissonRenewal{}
	var reads []*redissonRenewal
	fields := map[*redissonRenewal]string{}
	for _, e := range wd.entries {
		if len(e.fields) == 0 {
			continue
		}
		fields[e] = e.fields[0]
		if e.kind == renewRead {
			reads = append(reads, e)
			continue
		}
		tag := clusterHashTag(e.name)
		groups[tag] = append(groups[tag], e)
	}
	wd.mu.Unlock()

	ctx, cancel := context.WithTimeout(wd.ctx, 2*wd.interval)
	defer cancel()
	var dropped []*redissonRenewal
	for _, g := range groups {
		for chunk := range slices.Chunk(g, redissonRenewBatch) {
			keys := make([]string, len(chunk))
			args := make([]any, 1, len(chunk)+1)
			args[0] = wd.leaseArg
			for i, e := range chunk {
				keys[i] = e.name
				args = append(args, fields[e])
			}
			res, err := wd.tr.eval(ctx, true, rsRenewBatch, keys, args...).Int64Slice()
			for i, e := range chunk {
				if err != nil || i >= len(res) || res[i] == 0 {
					dropped = append(dropped, e)
				} else {
					wd.renewals.Add(1)
				}
			}
		}
	}
	for _, e := range reads {
		n, err := wd.tr.eval(ctx, true, rsReadRenew, []string{e.name, redissonKeyPrefix(e.name)}, wd.leaseArg, fields[e]).Int64()
		if err != nil || n == 0 {
			dropped = append(dropped, e)
		} else {
			wd.renewals.Add(1)
		}
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	for _, e := range dropped {
		k := redissonRenewKey{e.name, e.kind}
		if wd.entries[k] == e {
			delete(wd.entries, k)
		}
	}
}

// clusterHashTag is the part of key a Redis cluster hashes: the text between the first '{' and
// the next '}' when not empty, else the whole key. Keys with the same tag share a slot.
func clusterHashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}
