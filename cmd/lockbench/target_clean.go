package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/acl"
	"github.com/redis/rueidis"
)

// clean empties the keyspace between runs, so that every run starts from the same state and
// no driver inherits another's keys (a leftover lock would make the next driver wait for its
// lease). On a topology lockbench started, it FLUSHALLs every master. On a deployment it
// attached to, it never flushes: it deletes only the keys that contain prefix (every lock,
// queue and channel key lockbench makes does), found by SCAN on every master, within
// cleanTimeout. It returns how many keys it deleted.
func (t *target) clean(ctx context.Context, prefix string) (int64, error) {
	var deleted int64
	for _, n := range t.masters() {
		var err error
		if t.provider == providerAttached {
			var d int64
			d, err = n.deleteMatching(ctx, prefix)
			deleted += d
		} else {
			sctx, cancel := context.WithTimeout(ctx, inspectTimeout)
			err = n.c.Do(sctx, n.c.B().Flushall().Build()).Error()
			cancel()
		}
		if err != nil {
			return deleted, fmt.Errorf("cleaning %s: %w", n.addr, err)
		}
	}
	return deleted, nil
}

// deleteMatching deletes the keys of this node that contain prefix, one DEL per key (keys of
// one node may still lie in different cluster slots, where a multi-key DEL is CROSSSLOT).
func (n inspectNode) deleteMatching(ctx context.Context, prefix string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, cleanTimeout)
	defer cancel()
	pattern := "*" + acl.GlobEscape(prefix) + "*"
	var deleted int64
	cursor := uint64(0)
	for {
		e, err := n.c.Do(ctx, n.c.B().Scan().Cursor(cursor).Match(pattern).Count(cleanScanCount).Build()).AsScanEntry()
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("stopped after %v with %d keys deleted: %w", cleanTimeout, deleted, err)
			}
			return deleted, err
		}
		if len(e.Elements) > 0 {
			cmds := make([]rueidis.Completed, 0, len(e.Elements))
			for _, k := range e.Elements {
				cmds = append(cmds, n.c.B().Del().Key(k).Build())
			}
			for _, r := range n.c.DoMulti(ctx, cmds...) {
				d, err := r.AsInt64()
				if err != nil {
					return deleted, err
				}
				deleted += d
			}
		}
		if e.Cursor == 0 {
			return deleted, nil
		}
		cursor = e.Cursor
	}
}

// explainRefusal says what the server's ACL refuses lockbench's user, found with acl.Diagnose
// on the first master: the commands, keys or channels by name, and how to fix it.
func (t *target) explainRefusal(ctx context.Context, prefix string) string {
	user := t.conn.User()
	if user == "" {
		user = "default"
	}
	fix := fmt.Sprintf("'lockbench acl --key-prefix %s --user %s' prints the rules a lockbench user needs", prefix, user)
	ms := t.masters()
	if len(ms) == 0 {
		return fix
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), inspectTimeout)
	defer cancel()
	refused, err := acl.Diagnose(ctx, ms[0].c, prefix)
	switch {
	case err != nil:
		return fmt.Sprintf("user %q may not run a command lockbench needs (NOPERM; %v); %s", user, t.conn.Redact(err.Error()), fix)
	case len(refused) == 0:
		return fmt.Sprintf("user %q was refused a command, key or channel (NOPERM), but %s now allows everything lockbench checks; %s", user, ms[0].addr, fix)
	}
	return fmt.Sprintf("user %q may not use %s on %s; %s", user, strings.Join(refused, ", "), ms[0].addr, fix)
}
