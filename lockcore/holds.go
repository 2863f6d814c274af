package lockcore

import (
	"hash/maphash"
	"math"
	"sync"
	"time"
)

// hold is the local record of one lock this Client holds.
type hold struct {
	owner    Owner  // the local holder now
	field    string // the hash field in Redis; stays put if the hold moves to another local owner
	count    int    // reentrant holds, mirroring the count in Redis
	leaseArg string // lease in ms, sent again on partial unlock and renewal
	lease    int64  // leaseArg in nanoseconds
	watchdog bool   // renewed by the watchdog (taken without an explicit lease)
	// lastSet is the watchdog's schedule (Client.now): when the lease was last set or a renewal
	// last sent. It says when to renew, never whether the lease is still live: see expires.
	lastSet int64
	// expires is the confirmed lease (Client.now): the send time of the last call that set the
	// lease and whose reply confirmed it, plus the lease it set. Redis ran the call after it was
	// sent, so the key lives at least until then (clock drift aside); a call that failed or whose
	// reply was lost moves nothing. Hand-overs trust this and nothing else (leaseSafe).
	expires int64
	// setAt is the send time of the call that last moved expires: a reply that comes back late
	// from an earlier call does not overwrite what a later one set.
	setAt int64
	// unsure is set when a call on this hold's field got no answer (a re-entry, say): it may
	// still run, later, and set a shorter lease than expires says. The hold is never handed
	// over again; it leaves through Redis.
	unsure bool
	// renewer is how the watchdog renews this hold when the plain lock renewal does not fit
	// (read-write locks); nil for a hash at the table key renewed by renewScript.
	renewer *renewer
}

// renewer is a hold's own renewal: script runs with keys and ARGV lease ms and the hold's field,
// and returns 1 if renewed, 0 if the hold is gone.
type renewer struct {
	script *script
	keys   []string
}

const holdShards = 64

// holdTable maps lock names to holds. It is sharded so that concurrent acquisitions of different
// locks rarely meet on a mutex; the mutexes guard map operations only, never I/O.
type holdTable struct {
	seed   maphash.Seed
	shards [holdShards]holdShard
}

type holdShard struct {
	mu sync.Mutex
	m  map[string]*hold
	co map[string]*cohort // local queues of Mutex names in use (cohort.go)
	// gen is the field generation of (lock name, owner field) pairs retired by a call of
	// unknown outcome (doubt.go); nil until the first.
	gen map[string]int
	_   [32]byte // keep shards on separate cache lines
}

func (t *holdTable) init() {
	t.seed = maphash.MakeSeed()
	for i := range t.shards {
		t.shards[i].m = make(map[string]*hold)
		t.shards[i].co = make(map[string]*cohort)
	}
}

func (t *holdTable) shard(name string) *holdShard {
	return &t.shards[maphash.String(t.seed, name)%holdShards]
}

// setLease records that a call sent at sent set h's lease in Redis to lease (PEXPIRE: it
// replaces a longer one), unless a call sent later already set it. The shard's mutex is held.
func (h *hold) setLease(sent int64, lease time.Duration) {
	if sent >= h.setAt {
		h.expires, h.setAt = sent+int64(lease), sent
	}
}

// leaseMaySet records, before a call sent at sent that sets owner's lease of name to lease if it
// runs (a re-entry, the release of an inner hold: both PEXPIRE), that the confirmed lease is at
// most that from then on. Until the reply comes back the table would otherwise trust the longer
// lease it had while Redis already keeps the shorter one, and a reply that comes back late from
// an earlier call (a renewal) must not raise it past what this call sets. If the call fails, the
// hold keeps the lower lease: it errs on the side of handing over less. No record of owner: a
// first hold, nothing to lower.
func (t *holdTable) leaseMaySet(name string, owner Owner, sent int64, lease time.Duration) {
	s := t.shard(name)
	s.mu.Lock()
	if h := s.m[name]; h != nil && h.owner == owner && sent >= h.setAt {
		h.expires, h.setAt = min(h.expires, sent+int64(lease)), sent
	}
	s.mu.Unlock()
}

// acquiredField records that owner now holds name in Redis through field (once more, if it held
// it), granted by a call sent at sent (Client.now): the lease runs from no earlier than that. The
// field is not owner's own after a hand-over (cohort.go), or after a retirement (doubt.go); a
// reentrant grant counts up the record, which keeps its field.
func (t *holdTable) acquiredField(name string, owner Owner, field, leaseArg string, lease time.Duration, watchdog bool, sent int64) {
	s := t.shard(name)
	s.mu.Lock()
	h := s.m[name]
	if h != nil && h.owner == owner {
		h.count++
		h.lastSet = sent
		h.setLease(sent, lease)
		s.mu.Unlock()
		return
	}
	// Either new, or a stale record of a previous local holder whose unlock reply has not been
	// processed yet: Redis just granted the lock to owner, so the record is owner's now.
	s.m[name] = newHold(owner, field, leaseArg, lease, watchdog, sent)
	s.mu.Unlock()
}

// newHold is the record of a first hold granted by a call sent at sent.
func newHold(owner Owner, field, leaseArg string, lease time.Duration, watchdog bool, sent int64) *hold {
	return &hold{owner: owner, field: field, count: 1, leaseArg: leaseArg, lease: int64(lease), watchdog: watchdog,
		lastSet: sent, expires: sent + int64(lease), setAt: sent}
}

// acquiredWith is acquired for a hold stored under a table key of its own (not the lock name),
// written in Redis as field, and renewed by rn: the holds of read-write locks, where several
// local owners hold one lock at once and each hold kind renews differently.
// The read-write scripts only ever extend a TTL on acquisition, so expires only grows here.
func (t *holdTable) acquiredWith(key string, owner Owner, field, leaseArg string, lease time.Duration, watchdog bool, sent int64, rn *renewer) {
	s := t.shard(key)
	s.mu.Lock()
	if h := s.m[key]; h != nil && h.owner == owner {
		h.count++
		h.lastSet = sent
		h.expires = max(h.expires, sent+int64(lease))
		s.mu.Unlock()
		return
	}
	h := newHold(owner, field, leaseArg, lease, watchdog, sent)
	h.renewer = rn
	s.m[key] = h
	s.mu.Unlock()
}

// releasedOne settles h after Redis released one of its holds, for scripts that report whether
// the lock is gone but not whether this field is: the record goes with its last hold. A
// partial unlock that did not set the lease again leaves the lease clock alone.
func (t *holdTable) releasedOne(key string, h *hold) {
	if h == nil {
		return
	}
	s := t.shard(key)
	s.mu.Lock()
	if s.m[key] == h {
		if h.count > 1 {
			h.count--
		} else {
			delete(s.m, key)
		}
	}
	s.mu.Unlock()
}

// lookup returns the field and lease to unlock name as owner, and the record to settle after.
// ok is false when the lock is held locally by another owner.
func (t *holdTable) lookup(name string, owner Owner) (h *hold, field, leaseArg string, ok bool) {
	s := t.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	h = s.m[name]
	if h == nil {
		return nil, owner.field, "", true
	}
	if h.owner != owner {
		return nil, "", "", false
	}
	return h, h.field, h.leaseArg, true
}

// released settles h after an unlock: gone is true when Redis no longer holds it for us. A
// partial unlock sent at sent set the lease again (PEXPIRE), so the record's clocks follow.
func (t *holdTable) released(name string, h *hold, gone bool, sent int64) {
	if h == nil {
		return
	}
	s := t.shard(name)
	s.mu.Lock()
	if s.m[name] == h {
		if gone {
			delete(s.m, name)
		} else if h.count > 1 {
			h.count--
			h.lastSet = sent
			h.setLease(sent, time.Duration(h.lease))
		}
	}
	s.mu.Unlock()
}

// releaseFailed settles h after the release of one of its inner holds (h counted more than one)
// failed: an error reply, or no reply at all (unknown true). The outer hold stands either way,
// as Redis still counts it: the record keeps it, renewed, and counts one hold less, as Redisson
// decrements its renewal count when an unlock fails. If the release did not run, Redis counts one
// hold more than the record from then on; the Unlock that takes the record to zero finds that
// out and puts the field in doubt then (doubt.go). Without a reply, the call may still run later
// and set the lease, so the hold is unsure (never handed over). It reports whether the record
// was kept; false when h was not the record of name with more than one hold, and the caller
// settles a last hold as before.
func (t *holdTable) releaseFailed(name string, h *hold, unknown bool) bool {
	if h == nil {
		return false
	}
	s := t.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[name] != h || h.count <= 1 {
		return false
	}
	h.count--
	if unknown {
		h.unsure = true
	}
	return true
}

// renewal is one lease to renew.
type renewal struct {
	name     string
	h        *hold
	field    string
	leaseArg string
	lease    time.Duration // leaseArg's
	sent     int64         // when the renewal went out (Client.now), for the confirmed lease
	renewer  *renewer      // nil: renewScript on the lock at name
}

// due appends the watchdog holds whose lease was set at or before cutoff, and marks them set at
// now. It also forgets explicit-lease holds whose lease has run out, so that locks left to expire
// (a common use of a lease) do not accumulate here.
func (t *holdTable) due(dst []renewal, cutoff, now int64) []renewal {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		for name, h := range s.m {
			if !h.watchdog {
				if now > h.expires && now-h.lastSet > h.lease {
					delete(s.m, name)
				}
				continue
			}
			if h.lastSet <= cutoff {
				h.lastSet = now
				dst = append(dst, renewal{name: name, h: h, field: h.field, leaseArg: h.leaseArg, lease: time.Duration(h.lease), sent: now, renewer: h.renewer})
			}
		}
		s.mu.Unlock()
	}
	return dst
}

// lost drops h if it is still the record for name: its renewal found the lock gone.
func (t *holdTable) lost(name string, h *hold) {
	s := t.shard(name)
	s.mu.Lock()
	if s.m[name] == h {
		delete(s.m, name)
	}
	s.mu.Unlock()
}

// dropOwner drops the record of name if owner holds it.
func (t *holdTable) dropOwner(name string, owner Owner) {
	s := t.shard(name)
	s.mu.Lock()
	if h := s.m[name]; h != nil && h.owner == owner {
		delete(s.m, name)
	}
	s.mu.Unlock()
}

// len returns the number of held locks.
func (t *holdTable) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// lent reports whether name is held in this Client through field by an owner other than owner:
// the field of the owner that took the lock through Redis, lent to the owner it was handed to.
// Redis cannot tell the two apart, so an attempt by owner with that field, through any lock kind,
// would be taken as re-entry and let two holders in.
func (t *holdTable) lent(name string, owner Owner, field string) bool {
	s := t.shard(name)
	s.mu.Lock()
	h := s.m[name]
	lent := h != nil && h.field == field && h.owner != owner
	s.mu.Unlock()
	return lent
}

// unsure marks the hold of name through field, if any, as unsure (see hold.unsure), and reports
// whether there was one.
func (t *holdTable) markUnsure(name, field string) bool {
	s := t.shard(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.m[name]; h != nil && h.field == field {
		h.unsure = true
		return true
	}
	return false
}

// counts reports whether the table has a hold of name through field, whoever holds it now.
func (t *holdTable) counts(name, field string) bool {
	s := t.shard(name)
	s.mu.Lock()
	h := s.m[name]
	s.mu.Unlock()
	return h != nil && h.field == field
}

// renewedAt records that r's renewal, sent at r.sent, found the lock held and set its lease.
func (t *holdTable) renewedAt(r renewal) {
	s := t.shard(r.name)
	s.mu.Lock()
	if h := s.m[r.name]; h == r.h && h.field == r.field {
		h.setLease(r.sent, r.lease)
	}
	s.mu.Unlock()
}

// retryRenewal makes h due again at the next watchdog tick after a failed renewal.
func (t *holdTable) retryRenewal(name string, h *hold) {
	s := t.shard(name)
	s.mu.Lock()
	if s.m[name] == h {
		h.lastSet = math.MinInt64
	}
	s.mu.Unlock()
}
