package lockcore

import "strings"

// hashTagged returns name inside a hash tag, or name itself when it already has one: Redisson's
// form of the lock name inside every helper key and channel, which keeps them in the lock's
// cluster slot.
func hashTagged(name string) string {
	if strings.Contains(name, "{") {
		return name
	}
	return "{" + name + "}"
}

// tagged returns Redisson's name for a helper key or channel of the lock name: prefix, a colon
// and the hash-tagged name, built in one concatenation (channelName is on every Mutex handle).
func tagged(prefix, name string) string {
	if strings.Contains(name, "{") {
		return prefix + ":" + name
	}
	return prefix + ":{" + name + "}"
}

// channelName returns the unlock channel Redisson uses for the lock name.
func channelName(name string) string { return tagged("redisson_lock__channel", name) }

// unlockMessage is what a full release publishes; Redisson's LockPubSub.UNLOCK_MESSAGE.
const unlockMessage = "0"

// wakeAllMessage is what a release that frees the lock for every waiter publishes (a write
// unlock of a read-write lock); Redisson's LockPubSub.READ_UNLOCK_MESSAGE. Waiters woken by it
// all retry; any other message wakes one.
const wakeAllMessage = "1"
