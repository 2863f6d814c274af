// Package lockhooks reaches lockcore's benchmark hooks: the knobs that switch its optimisations
// off for comparison and the counters that explain what an acquisition cost. They exist for
// lockbench's drivers and measurements, not for services that use lockcore, so they are kept out
// of lockcore's public API; this package is internal to the lockbench module.
//
// lockcore registers the hooks in its init function; the functions here take lockcore's types
// as any (this package cannot import lockcore, which imports it) and panic on other types.
package lockhooks

import "time"

// Knobs switch lockcore optimisations off or to an earlier mode, to measure what each one buys.
// The zero value is lockcore's normal behaviour.
type Knobs struct {
	// NoBatch turns auto-batching off: every Mutex lock attempt and release is its own script
	// call, however many goroutines issue them at once.
	NoBatch bool
	// BatchInFlight chooses when a batch leaves. 0: lockcore's default, batches gather (an
	// operation that finds no batch gathering yields the processor once, then sends everything
	// queued meanwhile), except to a cluster master with replicas in synced mode, where they
	// leave when a call returns with one in flight (see lockcore's batch.go). -1: batches
	// gather everywhere. 1 to 64, the earlier mode everywhere: an operation goes out at once
	// while fewer than BatchInFlight calls of its batch group are in flight, and otherwise
	// queues for the next batch, which leaves when a call returns. Ignored with NoBatch;
	// lockcore.New refuses other values.
	BatchInFlight int
	// NoLocalQueue turns the local waiter queue off: every goroutine that wants a Mutex makes its
	// own attempts in Redis, and a releaser that asks again competes with the woken waiter. It
	// also turns hand-overs off.
	NoLocalQueue bool
}

// Stats are counts of a lockcore Client's Mutex work since New, for telling why an acquisition
// costs what it does. FencedMutex attempts count too; the other lock kinds are not counted.
type Stats struct {
	// Attempts is lock script runs: acquisitions through Redis, reentrant ones included.
	Attempts int64
	// FailedAttempts is the attempts that found the lock taken.
	FailedAttempts int64
	// Handoffs is releases that passed the lock to a local waiter inside the process.
	Handoffs int64
	// Passes is releases that passed the lock to a local waiter inside the release script.
	Passes int64
	// Yields is releases with a local waiter that left the lock free for other clients and held
	// that waiter back: they were subscribed to hear the release, or the chain of grants inside
	// the Client was over and it was time to leave pollers a window (see lockcore/outside.go).
	Yields int64
	// Doubts is hash fields put in doubt by a call of unknown outcome (a lost reply) or found
	// counting more holds than the Client did; Resolved is those the resolver has since cleared
	// or found gone (see lockcore/doubt.go).
	Doubts, Resolved int64
	// Refused is lock attempts not sent because their field was lent to another local owner by
	// a hand-over.
	Refused int64
	// Batches is script calls that carried more than one Mutex operation (see Knobs.NoBatch).
	Batches int64
	// Queued is Mutex operations (attempts and releases) that waited in a batch queue rather than
	// going out at once; BatchedOps of them went out in Batches, the rest alone.
	Queued, BatchedOps int64
	// QueueWait is the mean time a queued operation waited before its call was sent: the latency
	// batching adds.
	QueueWait time.Duration
	// Subscribes and Unsubscribes are the (S)SUBSCRIBE and (S)UNSUBSCRIBE commands sent for
	// waiters' unlock channels (the lock kinds that wait on pub/sub).
	Subscribes, Unsubscribes int64
	// Channels is how many channels are subscribed now; PeakChannels the most at once.
	Channels, PeakChannels int64
	// WakeUps is waits on a channel ended by an unlock message (or a permit one left);
	// TimedWaits those ended by their timer (the lock's TTL) with no message: missed wake-ups.
	WakeUps, TimedWaits int64
	// SyncWaits is the WAITs (or WAITAOFs) sent after pipelines of lock scripts in synced mode;
	// NotSynced the calls whose replicas did not all acknowledge in time (see lockcore/sync.go).
	SyncWaits, NotSynced int64
}

// Hooks are lockcore's implementations, registered once by lockcore's init.
type Hooks struct {
	SetKnobs  func(opt any, k Knobs)                    // opt: *lockcore.Options
	Stats     func(client any) Stats                    // client: *lockcore.Client
	Renewals  func(client any) int64                    // client: *lockcore.Client
	HoldField func(mutex any, owner any) (string, bool) // mutex: *lockcore.Mutex, owner: lockcore.Owner
}

var hooks Hooks

// Register installs lockcore's hooks. lockcore calls it from init; nothing else should.
func Register(h Hooks) { hooks = h }

// SetKnobs sets k on opt, a *lockcore.Options, for the Client lockcore.New builds from it.
func SetKnobs(opt any, k Knobs) { hooks.SetKnobs(opt, k) }

// ClientStats returns the counts so far of client, a *lockcore.Client. Safe for concurrent use.
func ClientStats(client any) Stats { return hooks.Stats(client) }

// Renewals returns how many lease renewals the watchdog of client, a *lockcore.Client, has sent.
// Safe for concurrent use.
func Renewals(client any) int64 { return hooks.Renewals(client) }

// HoldField returns the hash field under which Redis counts owner's (a lockcore.Owner) holds of
// mutex (a *lockcore.Mutex), and whether the Client's local table shows owner holding it. After
// an in-process hand-over it is the field of the owner that took the lock through Redis, not
// owner.Field(): a checker that reads the lock hash to verify a hold must read this one. When
// owner holds no record it returns owner.Field() and false. It does not ask Redis.
func HoldField(mutex, owner any) (string, bool) { return hooks.HoldField(mutex, owner) }
