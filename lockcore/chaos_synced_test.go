package lockcore

import (
	"syscall"
	"testing"
	"time"
)

// chaosSyncTimeout is the chaos Clients' SyncTimeout on a replicated run: short, so that a
// call whose WAIT falls short stays within callBound.
const chaosSyncTimeout = 100 * time.Millisecond

// callBound is how long past its deadline a lock call of the run may return (invariant 4):
// chaosCallBound, and on a replicated run one WAIT more. A synced call into a silent link
// fails within SyncTimeout plus the write timeout, as a pipelined one within two ping gaps and
// the write timeout (the same here); but a grant whose WAIT answered short, after up to
// SyncTimeout, is undone by one more call, which may itself meet a silent link, before the
// call that a fair waiter makes to leave its queue: one SyncTimeout beyond the two calls
// chaosCallBound allows for, and one more of scheduling slack.
func (r *chaosRun) callBound() time.Duration {
	if r.cfg.replicated {
		return chaosCallBound + 2*chaosSyncTimeout
	}
	return chaosCallBound
}

// TestChaosSynced is TestChaos on a master with one replica, every Client in synced mode (the
// default finds the replica), while besides the link faults of each Client the replica's
// process is paused (SIGSTOP) now and then for 50–800 ms: every WAIT then falls short, and
// grants, releases and renewals are refused, undone and cleaned up as sync.go says, while the
// checker's invariants (exclusion across kinds, fencing order, clean-up, liveness, leases) must
// hold as they do without replicas. It also checks that the shortfalls happened.
func TestChaosSynced(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: seconds of load under faults")
	}
	cfg := newChaosConfig()
	if *chaosDurationFlag <= 0 && cfg.duration > 30*time.Second {
		// CI's 60 s go to TestChaos, the same schedules without replicas; this variant adds the
		// replica's pauses, which show within 30 s (a pause every 0.5–3 s), and lockcore's
		// package is the longest of CI's test phase.
		cfg.duration = 30 * time.Second
	}
	cfg.replicated = true
	r := newChaosRun(t, cfg)
	for _, cc := range r.clients {
		if mode, n := cc.c.Sync("chaos:a"); mode != SyncWait || n != 1 {
			t.Fatalf("c%d: Sync = %v, %d replicas; want wait, 1", cc.i, mode, n)
		}
	}
	r.run()
	var waits, short int64
	for _, cc := range r.clients {
		s := cc.c.snapshot()
		waits += s.SyncWaits
		short += s.NotSynced
	}
	if waits == 0 || short == 0 {
		t.Errorf("%d WAITs, %d of them short: the run did not test synced mode under replica pauses", waits, short)
	}
}

// pauseReplica pauses the replica for 50–800 ms every 0.5–3 s of the run, from the run's seed,
// and leaves it running at the end.
func (r *chaosRun) pauseReplica() {
	rng := chaosRNG(r.cfg.seed, 1<<20)
	for {
		gap := time.Duration(500+rng.IntN(2501)) * time.Millisecond
		pause := time.Duration(50+rng.IntN(751)) * time.Millisecond
		if !sleepUntil(time.Now().Add(gap), r.end) {
			return
		}
		if err := r.pair.replica.Signal(syscall.SIGSTOP); err != nil {
			r.t.Errorf("pause the replica: %v", err)
			return
		}
		time.Sleep(pause)
		if err := r.pair.replica.Signal(syscall.SIGCONT); err != nil {
			r.t.Errorf("resume the replica: %v", err)
			return
		}
	}
}
