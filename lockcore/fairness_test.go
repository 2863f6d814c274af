package lockcore

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/netem"
)

// jain is Jain's fairness index of xs: 1 when all are equal, 1/len(xs) when one has it all.
func jain(xs ...float64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 1
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// minFairGrants is how many grants TestClientsShareHotLockFairly measures at least (for up to
// 8 s): about 45 turns of a chain of about 65.
const minFairGrants = 3000

// TestClientsShareHotLockFairly: two Clients, as two processes, keep one lock hot with 8
// goroutines each, one of them behind a proxy at 1, 10 or 20 ms round trip. Their grants stay
// within a factor of two of each other (Jain's index over the two at least 0.9), and most grants
// of each are still hand-overs inside its process.
//
// Before a Client held its subscription while its goroutines waited (outside.go), the far one
// was visible to the near one's PUBLISH only in the moments its one attempting goroutine waited
// in Redis: the near Client passed the lock through Redis to itself for a whole HandoffWindow
// nearly every time, and Jain's index was 0.61 at 1 ms and 0.50 at 10 and 20 ms (the far Client
// got 1 grant in 100 to 450). Before a hold-back ended on the other Client's release, both
// Clients' hold-backs doubled to 64 ms while each waited out its own, the lock idle between.
func TestClientsShareHotLockFairly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, rtt := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond} {
		t.Run(rtt.String(), func(t *testing.T) {
			name := "fair-share-" + rtt.String()
			near := e.client(t, Options{})
			n := netem.New(netem.Conditions{Latency: rtt / 2})
			t.Cleanup(func() { n.Close() })
			var fopt Options
			fopt.Redis.DialCtxFn = func(ctx context.Context, addr string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
				return n.Dial(ctx, "tcp", addr)
			}
			far := e.client(t, fopt)
			ctx := ctxT(t, 60*time.Second)
			var inside atomic.Int32
			stopFar, farGrants, farViolations := heldHot(t, ctx, far, name, 8, 0, &inside)
			defer stopFar()
			stopNear, nearGrants, nearViolations := heldHot(t, ctx, near, name, 8, 0, &inside)
			defer stopNear()
			// Past the start (subscriptions, the hold-backs finding their length), then measured.
			time.Sleep(300 * time.Millisecond)
			n0, f0 := nearGrants.Load(), farGrants.Load()
			ns0, fs0 := near.snapshot(), far.snapshot()
			nearCut0, farCut0 := near.stats.cutShort.Load(), far.stats.cutShort.Load()
			// 2 s, or longer on a machine so loaded that 2 s held few turns (each about 65
			// grants): CI once measured 1,371 grants at 20 ms where 5,900 is usual, about 21
			// turns, too few for the two shares to even out (Jain 0.894).
			begun := time.Now()
			for time.Sleep(2 * time.Second); nearGrants.Load()-n0+farGrants.Load()-f0 < minFairGrants && time.Since(begun) < 8*time.Second; {
				time.Sleep(250 * time.Millisecond)
			}
			nd, fd := nearGrants.Load()-n0, farGrants.Load()-f0
			ns, fs := near.snapshot(), far.snapshot()
			nearCut, farCut := near.stats.cutShort.Load()-nearCut0, far.stats.cutShort.Load()-farCut0
			stopNear()
			stopFar()
			if v := nearViolations.Load() + farViolations.Load(); v != 0 {
				t.Fatalf("%d overlapping holds", v)
			}
			j := jain(float64(nd), float64(fd))
			t.Logf("round trip %v: near %d grants (%d hand-overs), far %d (%d hand-overs), Jain %.3f",
				rtt, nd, ns.Handoffs-ns0.Handoffs, fd, fs.Handoffs-fs0.Handoffs, j)
			if j < 0.9 {
				t.Errorf("round trip %v: near Client %d grants, far %d: Jain's index %.3f, want at least 0.9", rtt, nd, fd, j)
			}
			// A hold-back ends when the other Client has had its turn and released. The far
			// Client's nearly always do (the near one's turn is over before its hold-back is),
			// the near one's rarely (the far one still holds the lock when it ends: its attempt
			// is refused and it waits for the release). Left to run out, none ended early: both
			// grew to the longest (HandoffYield << maxOutsideShift, 64 ms), the lock idle
			// between turns (fair, at a tenth of the grants). A loaded CI machine lengthens
			// turns, so the test asks for an eighth, not for their lengths.
			nearYields, farYields := ns.Yields-ns0.Yields, fs.Yields-fs0.Yields
			t.Logf("round trip %v: hold-backs ended by the other Client's release: near %d of %d, far %d of %d",
				rtt, nearCut, nearYields, farCut, farYields)
			if (nearCut+farCut)*8 < nearYields+farYields {
				t.Errorf("round trip %v: %d of %d hold-backs ended by the other Client's release; want an eighth or more",
					rtt, nearCut+farCut, nearYields+farYields)
			}
			// The hand-over still carries each side's share.
			if h := ns.Handoffs - ns0.Handoffs; h*2 < nd {
				t.Errorf("near Client: %d hand-overs of %d grants", h, nd)
			}
			if h := fs.Handoffs - fs0.Handoffs; h*2 < fd {
				t.Errorf("far Client: %d hand-overs of %d grants", h, fd)
			}
		})
	}
}

// TestLocalContentionSubscribesNothing: a lock contended only by one Client's own goroutines is
// served by the hand-over, and the Client holds no subscription for it: the subscription that
// makes a Client heard by others (Client.contended) comes with the first attempt another client's
// hold refused, so a Client on many keys does not pay SUBSCRIBE and UNSUBSCRIBE for each key its
// goroutines meet on.
func TestLocalContentionSubscribesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client(t, Options{})
	ctx := ctxT(t, 30*time.Second)
	var inside atomic.Int32
	stop, grants, violations := heldHot(t, ctx, c, "local-only", 8, 0, &inside)
	defer stop()
	time.Sleep(300 * time.Millisecond)
	subs := e.numsub(t, channelName("local-only"))
	stop()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d overlapping holds", v)
	}
	if subs != 0 || c.snapshot().Subscribes != 0 {
		t.Fatalf("%d subscriptions to the lock's channel (%d made) while only this Client's goroutines wanted it (%d grants)",
			subs, c.snapshot().Subscribes, grants.Load())
	}
}
