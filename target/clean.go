package target

import (
	"context"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/acl"
	"github.com/lockbench/lockbench/keyspace"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// Clean empties the keyspace between runs, so that every run starts from the same state and
// no driver inherits another's keys (a leftover lock would make the next driver wait for its
// lease). On a topology Open started, it FLUSHALLs every master. On a deployment it attached
// to, it never flushes: it deletes only lockbench's own keys for prefix, the keys of the exact
// shapes of package keyspace (never a key that merely contains the prefix), with the shapes
// the run's external adapters declared (keyspace.Declared), found by SCAN on every master,
// within CleanTimeout. It returns how many keys it deleted and adds them, by shape, to rec when
// rec is not nil (the result file's Cleanup), with a failure's cause.
func (t *Target) Clean(ctx context.Context, prefix string, rec *results.Cleanup, declared ...keyspace.Declared) (int64, error) {
	var deleted int64
	for _, n := range t.Masters() {
		var err error
		if t.Attached() {
			var d int64
			d, err = n.deleteOwn(ctx, keyspace.New(prefix, declared...), rec)
			deleted += d
		} else {
			sctx, cancel := context.WithTimeout(ctx, InspectTimeout)
			err = n.Client.Do(sctx, n.Client.B().Flushall().Build()).Error()
			cancel()
		}
		if err != nil {
			err = fmt.Errorf("cleaning %s: %w", n.Addr, err)
			if rec != nil {
				rec.Error = err.Error()
			}
			return deleted, err
		}
	}
	return deleted, nil
}

// cleanDelBatch is how many DELs deleteOwn pipelines at once.
const cleanDelBatch = 1000

// deleteOwn deletes this node's keys of ks, one DEL per key (keys of one node may still lie in
// different cluster slots, where a multi-key DEL is CROSSSLOT), and counts them in rec by shape.
func (n Node) deleteOwn(ctx context.Context, ks *keyspace.Keyspace, rec *results.Cleanup) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, CleanTimeout)
	defer cancel()
	c := n.Client
	var deleted int64
	keys, err := ks.Find(ctx, c)
	for len(keys) > 0 && err == nil {
		batch := keys[:min(len(keys), cleanDelBatch)]
		keys = keys[len(batch):]
		cmds := make([]rueidis.Completed, 0, len(batch))
		for _, k := range batch {
			cmds = append(cmds, c.B().Del().Key(k.Name).Build())
		}
		for i, r := range c.DoMulti(ctx, cmds...) {
			var d int64
			if d, err = r.AsInt64(); err != nil {
				break
			}
			deleted += d
			if rec != nil {
				rec.Add(batch[i].Shape.Pattern, d) // 0: gone since the SCAN (an unlock latch's PX)
			}
		}
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("stopped after %v with %d keys deleted: %w", CleanTimeout, deleted, err)
	}
	return deleted, err
}

// ExplainRefusal says what the server's ACL refuses the connection's user, found with
// acl.Diagnose on the first master for lockbench's keys under prefix: the commands, keys or
// channels by name, and how to fix it. Credentials never show in it.
func (t *Target) ExplainRefusal(ctx context.Context, prefix string) string {
	user := t.conn.User()
	if user == "" {
		user = "default"
	}
	fix := fmt.Sprintf("'lockbench acl --key-prefix %s --user %s' prints the rules a lockbench user needs", prefix, user)
	ms := t.Masters()
	if len(ms) == 0 {
		return fix
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), InspectTimeout)
	defer cancel()
	refused, err := acl.Diagnose(ctx, ms[0].Client, prefix)
	switch {
	case err != nil:
		return fmt.Sprintf("user %q may not run a command lockbench needs (NOPERM; %v); %s", user, t.conn.Redact(err.Error()), fix)
	case len(refused) == 0:
		return fmt.Sprintf("user %q was refused a command, key or channel (NOPERM), but %s now allows everything lockbench checks; %s", user, ms[0].Addr, fix)
	}
	return fmt.Sprintf("user %q may not use %s on %s; %s", user, strings.Join(refused, ", "), ms[0].Addr, fix)
}
