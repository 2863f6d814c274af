package lockcore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// flipOnNoScript is the Client's rueidis client with one event forced between a synced
// pipeline's NOSCRIPT and its retry: flip runs once, right after the first NOSCRIPT reply.
type flipOnNoScript struct {
	rueidis.Client
	once sync.Once
	flip func()
}

func (f *flipOnNoScript) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	res := f.Client.DoMulti(ctx, multi...)
	if len(res) > 0 && isNoScript(res[0].Error()) {
		f.once.Do(f.flip)
	}
	return res
}

// TestSyncedNoScriptOnMasterWithoutReplicas reproduces what a fresh-clone CI run found in a
// sentinel fail-over (a nil pointer inside rueidis, from lockcore/sync.go): the new master's empty
// script cache answers the EVALSHA with NOSCRIPT, and by the time the body goes again its
// replicas have not attached, so there is no WAIT to send. The retry used the zero command
// waitCmd returns then. Here the replica count drops to 0 right after the NOSCRIPT (as a refresh
// would see such a master), for one call (execScript) and for a batch (execScriptsSynced): both
// must run the body, unwaited, as when the master had no replicas from the start.
func TestSyncedNoScriptOnMasterWithoutReplicas(t *testing.T) {
	t.Parallel() // a replica pair of its own; mostly waiting on the replica and WAIT timeouts
	r := newReplicated(t)
	ctx := t.Context()
	set := newScript(`return redis.call('set', KEYS[1], ARGV[1])`)
	for _, batch := range []bool{false, true} {
		c := r.client(t, Options{Sync: SyncWait})
		if n, _ := c.replicasFor("k"); n != 1 {
			t.Fatalf("the client counts %d replicas, want 1", n)
		}
		c.rdb = &flipOnNoScript{Client: c.rdb, flip: func() { c.repl.view.Store(&replicaView{}) }}
		if err := r.masters[0].Do(ctx, r.masters[0].B().ScriptFlush().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		// Bounded: before the fix the pipeline with the zero command never returned here (in CI
		// it panicked inside rueidis).
		done := make(chan error, 1)
		go func() {
			if !batch {
				res, err := c.execScript(ctx, set, []string{"noscript:one"}, []string{"v1"})
				if err == nil {
					err = res.Error()
				}
				done <- err
				return
			}
			calls := []scriptCall{{keys: []string{"noscript:a"}, args: []string{"v2"}}, {keys: []string{"noscript:b"}, args: []string{"v2"}}}
			res, unsynced := c.execScriptsSynced(ctx, []*script{set, set}, calls)
			for i := range calls {
				if res[i].Error() != nil || unsynced[i] != nil {
					done <- fmt.Errorf("batch call %d: %v, %v", i, res[i].Error(), unsynced[i])
					return
				}
			}
			done <- nil
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("batch %v: after NOSCRIPT on a master without replicas: %v", batch, err)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("batch %v: no answer in 15s after NOSCRIPT on a master without replicas", batch)
		}
	}
	for key, want := range map[string]string{"noscript:one": "v1", "noscript:a": "v2", "noscript:b": "v2"} {
		if got, err := r.masters[0].Do(ctx, r.masters[0].B().Get().Key(key).Build()).ToString(); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q: the body did not run", key, got, err, want)
		}
	}
}
