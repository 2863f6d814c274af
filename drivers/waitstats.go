package drivers

import "github.com/lockbench/lockbench/internal/lockhooks"

// WaitStats are a driver's counts of how its waiters waited, for the waiting-at-scale workload:
// what pub/sub costs per acquisition and where it breaks (Redisson's subscription pool). They
// count from Open, except Channels, which is now.
type WaitStats struct {
	// Subscribes and Unsubscribes are the SUBSCRIBE (SSUBSCRIBE) and UNSUBSCRIBE commands sent
	// for waiters.
	Subscribes, Unsubscribes int64
	// PeakChannels is the most channels subscribed at once; Channels is how many are
	// subscribed now.
	PeakChannels, Channels int64
	// WokenByMessage is waits ended by a wake-up message; EndedWithoutWake is waits that ended
	// because their timer ran out (the lock's TTL, or the wait's bound) before any message
	// came: a missed or absent wake-up.
	WokenByMessage, EndedWithoutWake int64
	// SubscribeTimeouts is subscriptions that failed for want of time: the channel's subscribe
	// lock, a free slot in the pub/sub pool, or the server's confirmation (and unsubscribes not
	// confirmed in time).
	SubscribeTimeouts int64
	// SubscribeRefusals is subscriptions the server refused with an error reply (NOPERM for an
	// ACL user without SUBSCRIBE), and SubscribeRefusal the first one's message.
	SubscribeRefusals int64
	SubscribeRefusal  string
}

// Sub returns w minus before, keeping w's Channels and PeakChannels (a peak over the whole
// life of the client, which for a driver opened per run is the run's).
func (w WaitStats) Sub(before WaitStats) WaitStats {
	return WaitStats{
		Subscribes:        w.Subscribes - before.Subscribes,
		Unsubscribes:      w.Unsubscribes - before.Unsubscribes,
		PeakChannels:      w.PeakChannels,
		Channels:          w.Channels,
		WokenByMessage:    w.WokenByMessage - before.WokenByMessage,
		EndedWithoutWake:  w.EndedWithoutWake - before.EndedWithoutWake,
		SubscribeTimeouts: w.SubscribeTimeouts - before.SubscribeTimeouts,
		SubscribeRefusals: w.SubscribeRefusals - before.SubscribeRefusals,
		SubscribeRefusal:  w.SubscribeRefusal,
	}
}

// WaitCountingLocker is a Locker that reports WaitStats. Implementations are safe for
// concurrent use.
type WaitCountingLocker interface {
	Locker
	// WaitStats returns the counts so far.
	WaitStats() WaitStats
}

var _ WaitCountingLocker = (*redissonLocker)(nil)

// WaitStats implements WaitCountingLocker.
func (l *redissonLocker) WaitStats() WaitStats { return l.subs.waitStats() }

// WaitStats implements WaitCountingLocker from the Client's Stats. lockcore's local waiter
// queue and hand-overs wait without pub/sub and are not counted here.
func (b *lockcoreBase) WaitStats() WaitStats {
	s := lockhooks.ClientStats(b.c)
	refusals, refusal := b.c.SubscribeRefusals()
	return WaitStats{
		SubscribeRefusals: refusals,
		SubscribeRefusal:  refusal,
		Subscribes:        s.Subscribes,
		Unsubscribes:      s.Unsubscribes,
		PeakChannels:      s.PeakChannels,
		Channels:          s.Channels,
		WokenByMessage:    s.WakeUps,
		EndedWithoutWake:  s.TimedWaits,
	}
}
