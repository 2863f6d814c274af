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
