package drivers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/redis/go-redis/v9"
)

// TestRedissonSyncProfiles pins what each profile does on a WAIT shortfall and how long it
// waits before a retry, as read at each tag (BaseConfig, ServiceManager.execute,
// CommandAsyncService.syncedEval), and that the zero value of the synced-path fields is the
// newest behaviour (a 4.x profile that sets none of them gets 4.7.0's: INFO ALL, plain WAIT,
// undo and 4 jittered retries).
func TestRedissonSyncProfiles(t *testing.T) {
	tests := []struct {
		version   string
		discovery redissonSyncDiscovery
		attempts  int
		unhandled bool
		waitAOF   bool
		message   string
	}{
		{"3.23", redissonInfoEveryCall, 3, false, false, "None of slaves were synced"},
		{"3.43", redissonInfoCached, 3, true, false, "None of slaves were synced. Try to increase slavesSyncTimeout setting or set checkLockSyncedSlaves = false."},
		{"3.52", redissonInfoAllCached, 4, false, true, "None of slaves were synced. Try to increase slavesSyncTimeout setting or set checkLockSyncedSlaves = false."},
		{"", redissonInfoAllCached, 4, false, false, "None of slaves were synced. Try to increase slavesSyncTimeout setting or set checkLockSyncedSlaves = false."},
	}
	for _, tt := range tests {
		p := redissonProfile{}
		if tt.version != "" {
			var ok bool
			if p, ok = redissonProfileNamed(tt.version); !ok {
				t.Fatalf("no profile %s", tt.version)
			}
			if !p.syncedWait {
				t.Errorf("%s: no synced path (syncedEval is in every release since 3.21.0)", tt.version)
			}
		}
		if p.syncDiscovery != tt.discovery || p.retryAttempts() != tt.attempts || p.noSyncUnhandled != tt.unhandled ||
			p.waitAOF != tt.waitAOF || p.notSyncedMessage() != tt.message {
			t.Errorf("%q: discovery %d, %d attempts, unhandled %v, waitAOF %v, message %q; want %d, %d, %v, %v, %q",
				tt.version, p.syncDiscovery, p.retryAttempts(), p.noSyncUnhandled, p.waitAOF, p.notSyncedMessage(),
				tt.discovery, tt.attempts, tt.unhandled, tt.waitAOF, tt.message)
		}
	}
}

// TestRedissonRetryDelay checks retryInterval (a constant 1.5 s up to 3.43) and 3.52's
// EqualJitterDelay(1 s, 2 s): from the first retry on, half of the 2 s cap plus a random part up
// to the other half.
func TestRedissonRetryDelay(t *testing.T) {
	legacy, _ := redissonProfileNamed("3.43")
	jitter, _ := redissonProfileNamed("3.52")
	seen := map[time.Duration]bool{}
	for attempt := 1; attempt <= 4; attempt++ {
		if d := legacy.retryDelay(attempt); d != 1500*time.Millisecond {
			t.Errorf("3.43 attempt %d: %v, want 1.5s", attempt, d)
		}
		for range 50 {
			d := jitter.retryDelay(attempt)
			if d < time.Second || d > 2*time.Second {
				t.Fatalf("3.52 attempt %d: %v, want 1s to 2s", attempt, d)
			}
			seen[d] = true
		}
	}
	if len(seen) < 2 {
		t.Errorf("3.52: 200 delays all %v: no jitter", seen)
	}
}

// TestRedissonSyncedCount reads the replicas a WAIT or a WAITAOF counted: WAITAOF answers
// [local fsyncs, replica fsyncs], and CommandBatchService counts the second.
func TestRedissonSyncedCount(t *testing.T) {
	tests := []struct {
		reply any
		want  int
	}{
		{int64(2), 2},
		{int64(0), 0},
		{[]any{int64(1), int64(2)}, 2},
		{[]any{int64(1), int64(0)}, 0},
		{[]any{int64(1)}, 0},
	}
	for _, tt := range tests {
		cmd := redis.NewCmd(context.Background())
		cmd.SetVal(tt.reply)
		if got := syncedCount(cmd); got != tt.want {
			t.Errorf("syncedCount(%v) = %d, want %d", tt.reply, got, tt.want)
		}
	}
}

// fakeWaitHook stands in for a server that knows WAITAOF (Redis 7.2+; the tests' Redis 7.0
// does not): it records every pipeline the client sends, answers its WAIT or WAITAOF itself
// with reply, and sends the rest on.
type fakeWaitHook struct {
	mu    sync.Mutex
	sent  [][]string
	reply any
}

func (h *fakeWaitHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *fakeWaitHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *fakeWaitHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var rest []redis.Cmder
		var names []string
		for _, c := range cmds {
			args := make([]string, len(c.Args()))
			for i, a := range c.Args() {
				args[i] = fmt.Sprint(a)
			}
			names = append(names, strings.Join(args, " "))
			if n := c.Name(); n == "wait" || n == "waitaof" {
				c.(*redis.Cmd).SetVal(h.reply)
				continue
			}
			rest = append(rest, c)
		}
		if strings.HasPrefix(names[0], "eval") { // not the connection's set-up
			h.mu.Lock()
			h.sent = append(h.sent, names)
			h.mu.Unlock()
		}
		return next(ctx, rest)
	}
}

// TestRedissonWaitAOFBatch checks the batch syncedEval sends once it knows its master: 3.52
// ends it with WAITAOF 1 <replicas> 1000 on an AOF master whose server knows WAITAOF and
// counts WAITAOF's replica part; a profile with waitAOF unset (4.x) sends WAIT; 3.52 forgets the
// cached master after a call whose count differs and fails a call that synced none.
func TestRedissonWaitAOFBatch(t *testing.T) {
	srv := redistest.NewServer(t)
	p352, _ := redissonProfileNamed("3.52")
	tests := []struct {
		name    string
		profile redissonProfile
		reply   any
		wait    string // the batch's last command, after the script
		err     bool
		cached  bool
	}{
		{"3.52 synced", p352, []any{int64(1), int64(2)}, "waitaof 1 2 1000", false, true},
		{"3.52 one short", p352, []any{int64(1), int64(1)}, "waitaof 1 2 1000", false, false},
		{"3.52 none", p352, []any{int64(1), int64(0)}, "waitaof 1 2 1000", true, false},
		{"4.x WAIT", redissonProfile{syncedWait: true}, int64(2), "wait 2 1000", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
			defer rdb.Close()
			// The batch goes out on the node's 4 s clone, which go-redis makes without the
			// node's hooks: the hook goes on a clone put in the transport's cache.
			h := &fakeWaitHook{reply: tt.reply}
			batch := rdb.WithTimeout(RedissonTimeout + time.Second)
			batch.AddHook(h)
			tr := &redissonTransport{rdb: rdb, topology: topoSentinel, profile: tt.profile,
				probed: true, waitKnown: true, waitAOFKnown: true,
				masters:  map[string]redissonMasterSync{"": {replicas: 2, aof: true}},
				timeouts: map[redissonTimeoutKey]*redis.Client{{rdb, RedissonTimeout + time.Second}: batch}}
			err := tr.syncedEval(t.Context(), rsLock, []string{"wa:" + tt.name}, []any{"30000", "o:1"}).Err()
			if got := errors.Is(err, ErrRedissonNotSynced); got != tt.err {
				t.Errorf("err = %v, want a shortfall: %v", err, tt.err)
			} else if !tt.err && !errors.Is(err, redis.Nil) {
				t.Errorf("err = %v, want the lock script's nil (taken)", err)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.sent) == 0 {
				t.Fatal("no batch sent")
			}
			last := h.sent[len(h.sent)-1]
			if len(last) != 2 || !strings.HasPrefix(last[0], "eval") || last[1] != tt.wait {
				t.Errorf("batch %q, want the script then %q", last, tt.wait)
			}
			if _, ok := tr.masters[""]; ok != tt.cached {
				t.Errorf("master cached after the call: %v, want %v", ok, tt.cached)
			}
		})
	}
}
