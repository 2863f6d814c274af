package lockcore

import "strings"

// channelName returns the unlock channel Redisson uses for the lock name: the prefix plus the
// name inside a hash tag, unless the name already has one (so cluster keeps it in the lock's slot).
func channelName(name string) string {
	if strings.Contains(name, "{") {
		return "redisson_lock__channel:" + name
	}
	return "redisson_lock__channel:{" + name + "}"
}

// unlockMessage is what a full release publishes; Redisson's LockPubSub.UNLOCK_MESSAGE.
const unlockMessage = "0"

// wakeAllMessage is what a release that frees the lock for every waiter publishes (a write
// unlock of a read-write lock); Redisson's LockPubSub.READ_UNLOCK_MESSAGE. Waiters woken by it
// all retry; any other message wakes one.
const wakeAllMessage = "1"
