package main

import (
	"context"
	"fmt"
	"strings"

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
	pattern := "*" + globEscape(prefix) + "*"
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

// globEscape quotes the characters Redis glob patterns treat specially, so a prefix such as
// "bench[1]:" matches itself only.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
