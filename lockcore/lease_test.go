package lockcore

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSubMillisecondLeases takes every lock kind with a lease under 1 ms and with one of 1.5 ms.
// Redis takes leases in whole milliseconds: a lease truncated to PX 0 made the read lock's
// script fail after its HSET, leaving the key held with no TTL, so that no writer could ever
// take it. Each lease must round up: the attempt is granted, no key is left without a TTL, and
// another owner gets the lock once the lease has run out.
func TestSubMillisecondLeases(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(t, Options{})
	ctx := ctxT(t, 30*time.Second)
	type kind struct {
		name string
		// take takes the lock named name for owner with lease and one attempt (wait 0) or
		// waiting up to wait.
		take func(name string, o Owner, wait, lease time.Duration) (bool, error)
	}
	kinds := []kind{
		{"mutex", func(n string, o Owner, w, l time.Duration) (bool, error) { return c.Mutex(n).TryLock(ctx, o, w, l) }},
		{"fair", func(n string, o Owner, w, l time.Duration) (bool, error) {
			return c.FairMutex(n, FairMutexOptions{}).TryLock(ctx, o, w, l)
		}},
		{"rw-read", func(n string, o Owner, w, l time.Duration) (bool, error) { return c.RWMutex(n).TryRLock(ctx, o, w, l) }},
		{"rw-write", func(n string, o Owner, w, l time.Duration) (bool, error) { return c.RWMutex(n).TryLock(ctx, o, w, l) }},
		{"fenced", func(n string, o Owner, w, l time.Duration) (bool, error) {
			_, ok, err := c.FencedMutex(n).TryLock(ctx, o, w, l)
			return ok, err
		}},
		{"multilock", func(n string, o Owner, w, l time.Duration) (bool, error) {
			return NewMultiLock([]Locker{c.Mutex(n + ":a"), c.Mutex(n + ":b")}, MultiLockOptions{}).TryLock(ctx, o, w, l)
		}},
		{"redlock", func(n string, o Owner, w, l time.Duration) (bool, error) {
			return NewRedLock([]*Client{c}, n, RedLockOptions{}).TryLock(ctx, o, w, l)
		}},
	}
	for _, k := range kinds {
		for _, lease := range []time.Duration{500 * time.Microsecond, time.Microsecond, 1500 * time.Microsecond, 0} {
			name := "sub:" + k.name + ":" + lease.String()
			ok, err := k.take(name, c.NewOwner(), 0, lease)
			e.assertAllKeysExpire(t, k.name, lease)
			if lease > 0 && lease < time.Millisecond {
				if !errors.Is(err, ErrShortLease) || ok {
					t.Errorf("%s with lease %v: granted %v, %v; want ErrShortLease", k.name, lease, ok, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s with lease %v: %v", k.name, lease, err)
			}
			// A lease of 2 ms or less cannot be counted on once its reply is back (the drift
			// allowance is 2 ms), so its grant may be given up; a watchdog lease is granted.
			if !ok && lease == 0 {
				t.Errorf("%s with lease %v: not granted on a free lock", k.name, lease)
			}
			if lease == 0 {
				continue
			}
			// The write lock of the same name (the kind itself for the others) must be free
			// once the lease has run out.
			next := k
			if k.name == "rw-read" {
				next = kinds[3]
			}
			if ok, err := next.take(name, c.NewOwner(), 10*time.Second, 0); !ok || err != nil {
				t.Errorf("%s after %s with lease %v ran out: granted %v, %v", next.name, k.name, lease, ok, err)
			}
		}
	}
}

// TestLeaseRoundsUp checks that leases reach Redis rounded up to whole milliseconds, never down.
func TestLeaseRoundsUp(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Microsecond: "1", 1500 * time.Microsecond: "2", 2 * time.Millisecond: "2", 30 * time.Second: "30000"} {
		if got := msArg(d); got != want {
			t.Errorf("msArg(%v) = %s, want %s", d, got, want)
		}
	}
	if err := checkLease(999 * time.Microsecond); !errors.Is(err, ErrShortLease) {
		t.Errorf("checkLease(999µs) = %v, want ErrShortLease", err)
	}
	for _, d := range []time.Duration{0, time.Millisecond} {
		if err := checkLease(d); err != nil {
			t.Errorf("checkLease(%v) = %v", d, err)
		}
	}
}

// assertAllKeysExpire fails t if any key in Redis has no TTL: every key a lock writes must
// expire with its lease (the fenced lock's token counter is the one key that must not).
func (e *testEnv) assertAllKeysExpire(t *testing.T, kind string, lease time.Duration) {
	t.Helper()
	keys, err := e.onMasters(t, "KEYS", "*")[0].AsStrSlice()
	if err != nil {
		t.Fatalf("KEYS: %v", err)
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "redisson_lock_token") {
			continue
		}
		if pttl := e.int(t, "PTTL", k); pttl == -1 {
			t.Errorf("%s with lease %v left key %q with no TTL", kind, lease, k)
		}
	}
}
