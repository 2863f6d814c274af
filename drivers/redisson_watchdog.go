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

// redissonRenewBatchLua extends the leases of up to redissonRenewBatch locks, each if its owner
// field still holds it: Redisson 3.44+'s LockTask.renew (the same script at redisson-3.52.0 and
// redisson-4.7.0). KEYS the locks; ARGV[1] lease ms, ARGV[1+i] the owner field of KEYS[i].
// Returns one 1 (renewed) or 0 (not held) per lock.
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

// redissonReadRenewBatchLua is ReadLockTask.renew of redisson-3.52.0: up to redissonRenewBatch
// read-write locks held in read mode, two keys each (the lock and its "{name}" prefix), the first
// owner's field per lock. It extends the hash, then every reader's timeout keys — but the key of
// a reader's hold c is built from KEYS[c + 1], not from the lock's own prefix: Redisson's inner
// loop variable shadows the outer one (fixed in 4.0.0 by commit 725d181c8, "fix LockTask,
// ReadLockTask"). So with one lock per script hold 1 lands on the right key, in a batch the other
// locks' timeout keys are left to expire, and a reader holding twice while another reader holds
// the lock names KEYS[3], which is nil when the batch has one lock: the script fails and, as in
// Redisson, the tick's remaining batches are not sent.
// KEYS[2i-1] lock i, KEYS[2i] its prefix; ARGV[1] lease ms, ARGV[1+i] lock i's owner field.
// Returns one 1 (renewed) or 0 (not held) per lock.
const redissonReadRenewBatchLua = `
local renewed = {}
local j = 1
for i = 1, #KEYS, 2 do
  j = j + 1
  if redis.call('hget', KEYS[i], ARGV[j]) ~= false then
    redis.call('pexpire', KEYS[i], ARGV[1])
    if redis.call('hlen', KEYS[i]) > 1 then
      for _, f in ipairs(redis.call('hkeys', KEYS[i])) do
        local n = tonumber(redis.call('hget', KEYS[i], f))
        if type(n) == 'number' then
          for c = n, 1, -1 do
            redis.call('pexpire', KEYS[c + 1] .. ':' .. f .. ':rwlock_timeout:' .. c, ARGV[1])
          end
        end
      end
    end
    table.insert(renewed, 1)
  else
    table.insert(renewed, 0)
  end
end
return renewed`

// redissonReadRenewOwnersLua is ReadLockTask.renew of Redisson 4.4.0+ (redisson-4.7.0; commit
// bfbf73d0b, "prevent ReadLockTask cross-instance zombie key renewal"): for each lock the fields
// of every owner of this client holding it in read mode; for each that still holds, its own
// timeout keys are extended, and the hash when any still holds.
// KEYS[2i-1] lock i, KEYS[2i] its prefix; ARGV[1] lease ms, then per lock the number of fields
// and the fields. Returns one 1 (renewed) or 0 (no field holds) per lock.
const redissonReadRenewOwnersLua = `
local renewed = {}
local a = 2
for i = 1, #KEYS, 2 do
  local alive = false
  local n = tonumber(ARGV[a])
  a = a + 1
  for k = 1, n do
    local holds = redis.call('hget', KEYS[i], ARGV[a])
    if holds ~= false then
      alive = true
      for c = holds, 1, -1 do
        redis.call('pexpire', KEYS[i + 1] .. ':' .. ARGV[a] .. ':rwlock_timeout:' .. c, ARGV[1])
      end
    end
    a = a + 1
  end
  if alive then
    redis.call('pexpire', KEYS[i], ARGV[1])
    table.insert(renewed, 1)
  else
    table.insert(renewed, 0)
  end
end
return renewed`

// The renewal scripts as sent.
var (
	rsRenew      = newRedissonScript(redissonRenewLua)
	rsReadRenew  = newRedissonScript(redissonReadRenewLua)
	rsRenewBatch = newRedissonScript(redissonRenewBatchLua)
	// rsReadRenewBatch and rsReadRenewOwners are the batched read-lock renewals of 3.52 and 4.4+.
	rsReadRenewBatch  = newRedissonScript(redissonReadRenewBatchLua)
	rsReadRenewOwners = newRedissonScript(redissonReadRenewOwnersLua)
)

// redissonWatchdog renews leases the way the profile's Redisson does. Before 3.44: one timer per
// held lock, firing lease/3 after the lock was taken or last renewed, each sending its own
// renewal script and rescheduling itself while the lock is still held. From 3.44 (batched,
// LockRenewalScheduler with a LockTask and a ReadLockTask): one timer per task, armed lease/3
// after the task's first entry arrives and re-armed lease/3 after each run has finished
// (RenewalTask.run/schedule), each run renewing every held lock of the task up to
// redissonRenewBatch per script, the scripts one after another: all names in any order on a
// single server or sentinel, slot by slot on a cluster (RenewalTask.execute/renewSlots). It is
// safe for concurrent use.
type redissonWatchdog struct {
	tr       *redissonTransport
	batched  bool
	cluster  bool // batches are per slot (RenewalTask's isClusterConfig)
	leaseArg string
	interval time.Duration
	ctx      context.Context // ended by close: renewals in flight give up
	cancel   context.CancelFunc

	mu      sync.Mutex
	entries map[redissonRenewKey]*redissonRenewal
	tasks   [2]redissonRenewTask // batched: by redissonRenewKind
	closed  bool
	running sync.WaitGroup // renewals in flight; Add only under mu while not closed
	// renewals counts the renewals that found the lock held (see RenewalCounter).
	renewals atomic.Int64
	// batches counts the batched renewal scripts sent, failures included (for tests).
	batches atomic.Int64
}

// redissonRenewTask is the state of one batched renewal task (LockTask or ReadLockTask).
type redissonRenewTask struct {
	timer   *time.Timer // pending run; nil when none
	gen     uint64      // which arm the pending timer is, so that a stopped timer that fired anyway does nothing
	running bool        // a run is in flight; it re-arms the timer when it ends
	entries int         // held names of this kind
}

// redissonRenewal is Redisson's ExpirationEntry (3.44+: LockEntry/ReadLockEntry): the holds of
// one lock name by this client (one owner field per hold, so a reentrant owner appears once per
// level) and, before 3.44, the lock's timer. The read and the write holds of one read-write lock
// have an entry each (from 3.44 Redisson keeps them in its LockTask and ReadLockTask).
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
		cluster:  tr.topology == topoCluster,
		leaseArg: msString(lease),
		interval: lease / 3,
		entries:  map[redissonRenewKey]*redissonRenewal{},
	}
	wd.ctx, wd.cancel = context.WithCancel(context.Background())
	return wd
}

// add records a hold of name of kind by field, starting the lock's timer (or its task's) if it
// is the first.
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
	wd.entries[k] = e
	if !wd.batched {
		e.timer = time.AfterFunc(wd.interval, func() { wd.renew(e) })
		return
	}
	t := &wd.tasks[kind]
	t.entries++
	// RenewalTask.add: the first entry of an idle task schedules its run lease/3 later.
	if t.timer == nil && !t.running {
		wd.arm(kind)
	}
}

// arm schedules kind's next batched run; under mu.
func (wd *redissonWatchdog) arm(kind redissonRenewKind) {
	t := &wd.tasks[kind]
	t.gen++
	gen := t.gen
	t.timer = time.AfterFunc(wd.interval, func() { wd.runTask(kind, gen) })
}

// remove forgets one hold of name by field after an unlock, whatever its outcome (as Redisson
// does: a lock whose release failed must expire rather than be kept alive), stopping the timer
// with the last hold.
func (wd *redissonWatchdog) remove(name string, kind redissonRenewKind, field string) {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	wd.removeLocked(redissonRenewKey{name, kind}, nil, field)
}

// removeLocked forgets one hold by field of k's entry (only if it is e, when e is not nil), and
// the entry with its last hold; under mu. A batched task left without entries stops
// (RenewalTask.cancelExpirationRenewal).
func (wd *redissonWatchdog) removeLocked(k redissonRenewKey, e *redissonRenewal, field string) {
	cur := wd.entries[k]
	if cur == nil || e != nil && cur != e {
		return
	}
	if i := slices.Index(cur.fields, field); i >= 0 {
		cur.fields = slices.Delete(cur.fields, i, i+1)
	}
	if len(cur.fields) > 0 {
		return
	}
	if cur.timer != nil {
		cur.timer.Stop()
	}
	delete(wd.entries, k)
	if !wd.batched {
		return
	}
	t := &wd.tasks[k.kind]
	if t.entries--; t.entries == 0 && t.timer != nil {
		// Redisson's timer would still fire, find nothing to renew and not schedule again; a
		// hold taken before it fires starts a new schedule either way. (Redisson 3.52 leaves the
		// old timer running then, so that two runs may follow each other: see docs/drivers.md.)
		t.timer.Stop()
		t.timer = nil
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
	for i := range wd.tasks {
		if t := wd.tasks[i].timer; t != nil {
			t.Stop()
		}
	}
	wd.entries = nil
	wd.mu.Unlock()
	wd.cancel()
	wd.running.Wait()
}

// runTask is one run of kind's batched task (RenewalTask.run): it renews the task's held locks
// and, whatever the outcome, arms the next run lease/3 after this one ended while the task has
// entries.
func (wd *redissonWatchdog) runTask(kind redissonRenewKind, gen uint64) {
	wd.mu.Lock()
	t := &wd.tasks[kind]
	if wd.closed || t.timer == nil || t.gen != gen {
		wd.mu.Unlock()
		return
	}
	t.timer, t.running = nil, true
	// A snapshot of each entry's first owner (and, for 4.4+ read locks, of its owners), in the
	// order Redisson's iteration would meet them: any order, or slot by slot on a cluster.
	var groups [][]*redissonRenewal
	bySlot := map[uint16]int{}
	snap := map[*redissonRenewal][]string{}
	for _, e := range wd.entries {
		if e.kind != kind || len(e.fields) == 0 {
			continue
		}
		snap[e] = slices.Clone(e.fields)
		g := 0
		if wd.cluster {
			s := redisSlot(e.name)
			i, ok := bySlot[s]
			if !ok {
				i = len(groups)
				bySlot[s] = i
				groups = append(groups, nil)
			}
			g = i
		} else if len(groups) == 0 {
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], e)
	}
	wd.running.Add(1)
	wd.mu.Unlock()
	defer wd.running.Done()

	gone := wd.renewGroups(kind, groups, snap)

	wd.mu.Lock()
	defer wd.mu.Unlock()
	t.running = false
	if wd.closed {
		return
	}
	for _, g := range gone {
		// LockTask: cancelExpirationRenewal(name, first owner) — one hold of the owner the
		// script asked about (4.4+ read locks: one of each owner asked about).
		for _, f := range g.fields {
			wd.removeLocked(redissonRenewKey{g.e.name, kind}, g.e, f)
		}
	}
	if t.entries > 0 && t.timer == nil {
		wd.arm(kind)
	}
}

// redissonGone is a renewal that found its lock no longer held by the owners it asked about.
type redissonGone struct {
	e      *redissonRenewal
	fields []string
}

// renewGroups sends the renewal scripts of one run, each group (the whole client, or one slot)
// in batches of redissonRenewBatch, one script after another; the first error ends the run and
// keeps every entry (Redisson logs it and schedules the next run). It returns the entries no
// longer held.
func (wd *redissonWatchdog) renewGroups(kind redissonRenewKind, groups [][]*redissonRenewal, snap map[*redissonRenewal][]string) []redissonGone {
	var gone []redissonGone
	owners := kind == renewRead && wd.tr.profile.readRenewOwners
	for _, g := range groups {
		for chunk := range slices.Chunk(g, redissonRenewBatch) {
			var keys []string
			args := []any{wd.leaseArg}
			asked := make([][]string, len(chunk))
			for i, e := range chunk {
				fields := snap[e]
				keys = append(keys, e.name)
				switch {
				case owners:
					keys = append(keys, redissonKeyPrefix(e.name))
					asked[i] = distinct(fields)
					args = append(args, len(asked[i]))
					for _, f := range asked[i] {
						args = append(args, f)
					}
				case kind == renewRead:
					keys = append(keys, redissonKeyPrefix(e.name))
					asked[i] = fields[:1]
					args = append(args, fields[0])
				default:
					asked[i] = fields[:1]
					args = append(args, fields[0])
				}
			}
			sc := rsRenewBatch
			switch {
			case owners:
				sc = rsReadRenewOwners
			case kind == renewRead:
				sc = rsReadRenewBatch
			}
			ctx, cancel := context.WithTimeout(wd.ctx, 2*wd.interval)
			res, err := wd.tr.eval(ctx, true, sc, keys, args...).Int64Slice()
			cancel()
			wd.batches.Add(1)
			if err != nil {
				return gone
			}
			for i, e := range chunk {
				if i < len(res) && res[i] == 1 {
					wd.renewals.Add(1)
				} else {
					gone = append(gone, redissonGone{e, asked[i]})
				}
			}
		}
	}
	return gone
}

// distinct returns fields without repeats, in order of first appearance.
func distinct(fields []string) []string {
	var out []string
	for _, f := range fields {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// redisSlot is the cluster slot of key: CRC16 (XMODEM) of its hash tag, modulo 16384.
func redisSlot(key string) uint16 {
	var crc uint16
	for _, b := range []byte(clusterHashTag(key)) {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
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
