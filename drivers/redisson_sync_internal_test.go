package drivers

import (
	"context"
	"testing"
	"time"

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
