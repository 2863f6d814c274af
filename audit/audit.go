// Package audit scans a Redis deployment after a run for the keys the run left behind: every
// lock a run takes must be released and every helper key (fair-lock queues and deadlines,
// read-write lock timeouts) removed with it, so any key left is a stranded lock or a leak. The
// fencing token counters of fenced locks are the one documented exception: they have no TTL on
// purpose and are counted apart.
package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// Defaults for Scan.
const (
	// ScanCount is SCAN's COUNT hint.
	ScanCount = 1000
	// Timeout bounds the scan of one master.
	Timeout = 30 * time.Second
)

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

// Scan lists the keys matching pattern (a SCAN MATCH glob) on every master and classifies them:
// fencing counters apart, every other key a leftover, the first results.MaxAuditKeys of them
// listed with type and TTL. A master that fails stops the scan; the Audit returned then holds
// what was found so far and its Error says what failed, as does the error.
func Scan(ctx context.Context, masters []Master, pattern string) (results.Audit, error) {
	a := results.Audit{Masters: len(masters), Pattern: pattern}
	for _, m := range masters {
		if err := scanMaster(ctx, m, pattern, &a); err != nil {
			err = fmt.Errorf("audit of %s: %w", m.Addr, err)
			a.Error = err.Error()
			return a, err
		}
	}
	return a, nil
}

func scanMaster(ctx context.Context, m Master, pattern string, a *results.Audit) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	c := m.Client
	cursor := uint64(0)
	for {
		e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(pattern).Count(ScanCount).Build()).AsScanEntry()
		if err != nil {
			return err
		}
		var listed, latches []string
		for _, k := range e.Elements {
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
		if err := describe(ctx, m, listed, a); err != nil {
			return err
		}
		if e.Cursor == 0 {
			return nil
		}
		cursor = e.Cursor
	}
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
