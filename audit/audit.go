// Package audit scans a Redis deployment after a run for the keys the run left behind: every
// lock a run takes must be released and every helper key (fair-lock queues and deadlines,
// read-write lock timeouts) removed with it, so any key left is a stranded lock or a leak. The
// fencing token counters of fenced locks are the one documented exception: they have no TTL on
// purpose and are counted apart. On a deployment lockbench attached to, the audit counts only
// keys of lockbench's exact shapes (package keyspace): someone else's keys are not its business.
package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/keyspace"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// Timeout bounds the scan of one master.
const Timeout = 30 * time.Second

// FencingCounterPrefix starts the name of every fencing token counter (Redisson's RFencedLock
// layout, kept by lockcore-fenced): redisson_lock_token:{name}.
const FencingCounterPrefix = "redisson_lock_token:"

// Master is one master to scan: its address, for the report, and a client connected to that
// node alone (in a cluster, SCAN lists only the keys of the node it is sent to).
type Master struct {
	Addr   string
	Client rueidis.Client
}

// UnlockLatchPrefix starts the name of every Redisson unlock latch (3.24+):
// redisson_unlock_latch:{name}:<request id>, set with a PX by an unlock script.
const UnlockLatchPrefix = "redisson_unlock_latch:"

// IsFencingCounter reports whether key is a fencing token counter, kept after runs on purpose.
func IsFencingCounter(key string) bool { return strings.HasPrefix(key, FencingCounterPrefix) }

// Scope says which keys an audit looks at: those SCAN MATCH finds with any of Globs that Match
// accepts. On a deployment lockbench started and flushed, every key is the run's: Globs "*" and
// no Match. On one it attached to, only keys of lockbench's exact shapes are its own (see
// package keyspace): the globs find candidates, Match keeps lockbench's.
type Scope struct {
	Globs []string
	// Match, if not nil, is what a key found must pass to be counted.
	Match func(key string) bool
}

// All is the scope of every key: a deployment lockbench started.
var All = Scope{Globs: []string{"*"}}

// Scan lists the keys of scope on every master and classifies them: fencing counters apart,
// every other key a leftover, the first results.MaxAuditKeys of them listed with type and TTL.
// A key two globs find is counted once. A master that fails stops the scan; the Audit returned
// then holds what was found so far and its Error says what failed, as does the error.
func Scan(ctx context.Context, masters []Master, scope Scope) (results.Audit, error) {
	a := results.Audit{Masters: len(masters), Pattern: strings.Join(scope.Globs, " ")}
	for _, m := range masters {
		if err := scanMaster(ctx, m, scope, &a); err != nil {
			err = fmt.Errorf("audit of %s: %w", m.Addr, err)
			a.Error = err.Error()
			return a, err
		}
	}
	return a, nil
}

func scanMaster(ctx context.Context, m Master, scope Scope, a *results.Audit) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	seen := map[string]bool{} // two globs, or SCAN itself while the keyspace changes, may find a key twice
	for _, g := range scope.Globs {
		err := keyspace.Scan(ctx, m.Client, g, func(keys []string) (bool, error) {
			return true, classify(ctx, m, scope, seen, keys, a)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// classify counts and describes the keys of one SCAN reply that are in scope.
func classify(ctx context.Context, m Master, scope Scope, seen map[string]bool, keys []string, a *results.Audit) error {
	var listed, latches []string
	for _, k := range keys {
		if scope.Match != nil && !scope.Match(k) {
			continue
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		if IsFencingCounter(k) {
			a.FencingCounters++
			continue
		}
		if strings.HasPrefix(k, UnlockLatchPrefix) {
			latches = append(latches, k)
			continue
		}
		a.Leftovers++
		if len(a.Keys)+len(listed) < results.MaxAuditKeys {
			listed = append(listed, k)
		}
	}
	if err := latched(ctx, m, latches, a); err != nil {
		return err
	}
	return describe(ctx, m, listed, a)
}

// describe appends keys to a.Keys with their type and TTL, read in one pipeline.
func describe(ctx context.Context, m Master, keys []string, a *results.Audit) error {
	if len(keys) == 0 {
		return nil
	}
	c := m.Client
	cmds := make(rueidis.Commands, 0, 2*len(keys))
	for _, k := range keys {
		cmds = append(cmds, c.B().Type().Key(k).Build(), c.B().Pttl().Key(k).Build())
	}
	resps := c.DoMulti(ctx, cmds...)
	for i, k := range keys {
		typ, err := resps[2*i].ToString()
		if err != nil {
			return err
		}
		ttl, err := resps[2*i+1].AsInt64()
		if err != nil {
			return err
		}
		if typ == "none" {
			// Gone between SCAN and TYPE: it expired, so it was no leftover after all.
			a.Leftovers--
			continue
		}
		a.Keys = append(a.Keys, results.LeftoverKey{Node: m.Addr, Key: k, Type: typ, TTLMS: ttl})
	}
	return nil
}

// latched counts the unlock latches among keys that will expire, and describes the others as
// leftovers.
func latched(ctx context.Context, m Master, keys []string, a *results.Audit) error {
	if len(keys) == 0 {
		return nil
	}
	c := m.Client
	cmds := make(rueidis.Commands, 0, len(keys))
	for _, k := range keys {
		cmds = append(cmds, c.B().Pttl().Key(k).Build())
	}
	var stay []string
	for i, r := range c.DoMulti(ctx, cmds...) {
		ttl, err := r.AsInt64()
		if err != nil {
			return err
		}
		switch {
		case ttl > 0:
			a.UnlockLatches++
		case ttl == -1:
			stay = append(stay, keys[i])
		} // -2: expired since the SCAN
	}
	a.Leftovers += int64(len(stay))
	if room := results.MaxAuditKeys - len(a.Keys); room < len(stay) {
		stay = stay[:max(room, 0)]
	}
	return describe(ctx, m, stay, a)
}
